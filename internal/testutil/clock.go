package testutil

import (
	"sync/atomic"
	"time"
)

// Clock is a clock for code that takes a Now function: it stands still
// until Add moves it. It is safe for concurrent use.
type Clock struct{ ns atomic.Int64 }

// NewClock returns a Clock showing t.
func NewClock(t time.Time) *Clock {
	c := &Clock{}
	c.ns.Store(t.UnixNano())
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.ns.Add(int64(d)) }
