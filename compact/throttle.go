package compact

import (
	"sync"
	"time"
)

// throttleCheck is how often the throttle compares the observed rate with
// the limit (Kafka's Throttler checks every 300 ms).
const throttleCheck = 300 * time.Millisecond

// Throttle limits the I/O rate of all cleaner threads together, like
// Kafka's log.cleaner.io.max.bytes.per.second. A nil Throttle or a rate
// <= 0 does not limit.
type Throttle struct {
	rate  float64 // bytes per second
	now   func() time.Time
	sleep func(time.Duration)

	mu       sync.Mutex
	start    time.Time // REQUIRES: mu held
	observed float64   // bytes since start; REQUIRES: mu held
}

// NewThrottle returns a throttle of bytesPerSecond (<= 0: unlimited).
func NewThrottle(bytesPerSecond float64, now func() time.Time, sleep func(time.Duration)) *Throttle {
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = time.Sleep
	}
	return &Throttle{rate: bytesPerSecond, now: now, sleep: sleep, start: now()}
}

// Add records n bytes of I/O and sleeps when the rate since the last check
// is above the limit.
func (t *Throttle) Add(n int64) {
	if t == nil || t.rate <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observed += float64(n)
	elapsed := t.now().Sub(t.start)
	if elapsed < throttleCheck {
		return
	}
	if want := time.Duration(t.observed / t.rate * float64(time.Second)); want > elapsed {
		t.sleep(want - elapsed)
	}
	t.start, t.observed = t.now(), 0
}
