package position

import (
	"fmt"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Tailer reads a partition's records as they arrive, for views folded
// from the whole partition (decoded.jsonl, .groups): each update reads
// only what was appended since the previous one, unless retention or
// compaction changed what was read, in which case it starts over.
type Tailer struct {
	log  partlog.Log
	segs []partlog.Segment // as of the last update
	next int64             // offset after the last record read
}

// Update calls reset and then fn for every record when the log changed
// other than by appends (or on the first call), else fn for each record
// appended since the last update.
func (t *Tailer) Update(reset func(), fn func(*record.Record)) error {
	snap, release := t.log.Segments()
	defer release()
	from := 0
	if t.segs == nil || !t.appendedOnly(snap) {
		reset()
		t.next = -1
	} else {
		for from+1 < len(snap) && snap[from+1].Base <= t.next {
			from++
		}
	}
	for _, sg := range snap[from:] {
		start := max(t.next, sg.Base)
		err := t.log.Read(sg, start, func(r *record.Record) bool {
			fn(r)
			t.next = r.Offset + 1
			return true
		})
		if err != nil {
			t.segs = nil
			return fmt.Errorf("read %s-%d segment %d: %w", t.log.Topic(), t.log.Partition(), sg.Base, err)
		}
		t.next = max(t.next, sg.Next)
	}
	t.segs = append(t.segs[:0], snap...)
	return nil
}

// appendedOnly reports whether snap holds the segments of the last update
// unchanged, the last one possibly grown, followed by new ones.
func (t *Tailer) appendedOnly(snap []partlog.Segment) bool {
	if len(snap) < len(t.segs) {
		return false
	}
	for i, old := range t.segs {
		s := snap[i]
		if s.Base != old.Base || s.ID != old.ID || s.Next < old.Next {
			return false
		}
	}
	return true
}

// NewTailer returns a Tailer of l that has read nothing yet.
func NewTailer(l partlog.Log) Tailer { return Tailer{log: l} }
