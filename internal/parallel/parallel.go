// Package parallel runs independent jobs that mostly wait on the disk
// (fsync, metadata) on more goroutines than cores.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers is how many jobs Each runs at once: more than one per core, as
// the jobs mostly wait.
func Workers() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

// Each runs f(i) for every i in [0, n) on at most Workers goroutines and
// returns once all have returned.
func Each(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(Workers(), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
