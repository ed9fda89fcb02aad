package logstore

import (
	"errors"

	"github.com/partfs/partfs/record"
)

// lookupWindow is the first read of a scan: a point lookup reads this much
// (plus a batch crossing it); the rest of the scan is left to one
// record.Scanner, which reads ahead in its own chunks.
const lookupWindow = 16 << 10

// scanFrom calls fn for each batch of s in [pos, end) in order until fn
// returns true or an error. Batches are size- and CRC-checked by
// record.Scanner; a batch crossing the first window's end is read again
// by the scanner of the rest.
func scanFrom(s *segment, pos, end int64, fn func(b *record.Batch) (bool, error)) error {
	window := int64(lookupWindow)
	for pos < end {
		wend := min(end, pos+window)
		sc := record.NewScanner(s.log, pos, wend, s.path)
		for sc.Next() {
			if stop, err := fn(sc.Batch()); err != nil || stop {
				return err
			}
		}
		if err := sc.Err(); err != nil && (wend == end || !errors.Is(err, record.ErrTruncated)) {
			return err
		}
		pos = sc.Pos()
		window = end - pos
	}
	return nil
}
