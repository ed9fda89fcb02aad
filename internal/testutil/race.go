//go:build race

package testutil

// Race reports whether the race detector is on: it makes allocations of
// its own, so allocation counts do not hold under it.
const Race = true
