package partlog

import "github.com/partfs/partfs/record"

// ReadFrom calls fn for each record of l with offset >= from, in offset
// order, over one snapshot of its segments: what a reader that follows a
// log calls again with the offset it returns. That offset is the one to
// read from next: the end of the last segment read, or, when a Read fails,
// the offset after the last record fn got.
func ReadFrom(l Log, from int64, fn func(*record.Record)) (next int64, err error) {
	segs, release := l.Segments()
	defer release()
	next = from
	for _, s := range segs {
		if s.Next <= next {
			continue
		}
		err := l.Read(s, max(next, s.Base), func(r *record.Record) bool {
			fn(r)
			next = r.Offset + 1
			return true
		})
		if err != nil {
			return next, err
		}
		next = max(next, s.Next)
	}
	return next, nil
}
