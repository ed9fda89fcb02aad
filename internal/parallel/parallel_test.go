package parallel

import (
	"sync/atomic"
	"testing"
)

// TestEach: every index runs once, never more than Workers at a time.
func TestEach(t *testing.T) {
	for _, n := range []int{0, 1, Workers() - 1, 1000} {
		runs := make([]atomic.Int32, n)
		var now, most atomic.Int32
		Each(n, func(i int) {
			c := now.Add(1)
			for m := most.Load(); c > m && !most.CompareAndSwap(m, c); m = most.Load() {
			}
			runs[i].Add(1)
			now.Add(-1)
		})
		for i := range runs {
			if r := runs[i].Load(); r != 1 {
				t.Fatalf("n=%d: index %d ran %d times", n, i, r)
			}
		}
		if m := int(most.Load()); m > Workers() {
			t.Fatalf("n=%d: %d at once, more than %d workers", n, m, Workers())
		}
	}
}
