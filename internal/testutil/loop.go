package testutil

import "sync"

// Spin calls body over and over in a new goroutine counted by wg, until
// stop is closed or body returns false.
func Spin(wg *sync.WaitGroup, stop <-chan struct{}, body func() bool) {
	Every[struct{}](wg, stop, nil, body)
}

// Every is Spin waiting before each call for the channel next returns
// (next is called each time; nil: no wait).
func Every[T any](wg *sync.WaitGroup, stop <-chan struct{}, next func() <-chan T, body func() bool) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if next != nil {
				select {
				case <-stop:
					return
				case <-next():
				}
			}
			if !body() {
				return
			}
		}
	}()
}
