package kafkalog

import (
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// countBudget bounds the offsets one Stats call reads to count records;
// what is left over is counted by later calls.
const countBudget = 1 << 18

// tileCount is how many records a reader sees in a tile below next,
// while the tile keeps its ID.
type tileCount struct {
	id   uint64
	next int64
	n    int64
}

// count returns the records a reader sees in segs, reading only what
// earlier counts do not cover, at most countBudget offsets; exact is false
// when the budget ran out (the count is then an upper bound) or a read
// failed.
func (l *Log) count(segs []partlog.Segment) (n int64, exact bool) {
	budget := int64(countBudget)
	exact = true
	for _, sg := range segs {
		l.mu.Lock()
		c, ok := l.counts[sg.Base]
		l.mu.Unlock()
		if !ok || c.id != sg.ID || c.next > sg.Next {
			c = tileCount{id: sg.ID, next: sg.Base}
		}
		if c.next < sg.Next && budget > 0 {
			from := c.next
			err := l.Read(sg, from, func(r *record.Record) bool {
				c.n++
				return true
			})
			budget -= sg.Next - from
			if err == nil {
				c.next = sg.Next
				l.mu.Lock()
				l.counts[sg.Base] = c
				l.mu.Unlock()
			}
		}
		if c.next < sg.Next {
			exact = false
			n += c.n + sg.Next - max(c.next, sg.Base)
			continue
		}
		n += c.n
	}
	return n, exact
}
