package compact

import (
	"math/rand"
	"testing"
	"time"
)

func TestBackgroundCleansEveryDirtyLog(t *testing.T) {
	logs := []*memTarget{newMemTarget(t), newMemTarget(t), newMemTarget(t)}
	for i, m := range logs[:2] {
		fill(m, rand.New(rand.NewSource(int64(i))), 50, 10)
	}
	logs[2].add(1, 0, "k", "v") // nothing sealed: never eligible
	done := make(chan string, 10)
	stop := StartLogs(func() []Target { return []Target{logs[0], logs[1], logs[2]} }, BackgroundOptions{
		Threads: 2, Backoff: 10 * time.Millisecond, Options: Options{DedupeBufferSize: 1 << 20},
		OnCleaned: func(topic string, partition int, read, written, removed int64) {
			if read <= 0 || removed <= 0 {
				t.Errorf("OnCleaned read %d removed %d", read, removed)
			}
			done <- topic
		},
	})
	for i := 0; i < 2; i++ {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			stop()
			t.Fatal("background cleaner did not clean both logs")
		}
	}
	stop()
	stop() // idempotent
	for i, m := range logs[:2] {
		segs, _ := m.Segments()
		if m.checkpoint != segs[len(segs)-1].Base {
			t.Fatalf("log %d checkpoint %d, want %d", i, m.checkpoint, segs[len(segs)-1].Base)
		}
	}
	if logs[2].checkpoint != 0 || logs[2].replaces != 0 {
		t.Fatal("log without sealed segments was cleaned")
	}
}

func TestBackgroundStopInterruptsCleaning(t *testing.T) {
	m := newMemTarget(t)
	fill(m, rand.New(rand.NewSource(3)), 400, 50)
	before := m.String()
	started := make(chan struct{})
	var stop func()
	stop = StartLogs(func() []Target { return []Target{m} }, BackgroundOptions{
		Options: Options{Progress: func(int64) {
			select {
			case <-started:
			default:
				close(started)
			}
			time.Sleep(time.Millisecond)
		}},
	})
	<-started
	stop()
	if m.checkpoint != 0 && m.checkpoint != m.segs[len(m.segs)-1].base {
		t.Fatalf("checkpoint %d after an interrupted cleaning", m.checkpoint)
	}
	if m.checkpoint == 0 && m.String() != before {
		t.Log("interrupted after some groups were swapped (allowed)")
	}
}

func TestThrottle(t *testing.T) {
	now := time.Unix(0, 0)
	var slept time.Duration
	th := NewThrottle(1000, func() time.Time { return now }, func(d time.Duration) { slept += d; now = now.Add(d) })
	th.Add(500) // before the first check interval: no sleep
	if slept != 0 {
		t.Fatalf("slept %v before a check", slept)
	}
	now = now.Add(400 * time.Millisecond)
	th.Add(500) // 1000 bytes in 0.4 s at 1000 B/s: sleep 0.6 s
	if slept != 600*time.Millisecond {
		t.Fatalf("slept %v, want 600ms", slept)
	}
	now = now.Add(time.Second)
	th.Add(100) // under the rate
	if slept != 600*time.Millisecond {
		t.Fatalf("slept %v under the rate", slept)
	}
	var unlimited *Throttle
	unlimited.Add(1 << 30)
	NewThrottle(0, nil, nil).Add(1 << 30)
}
