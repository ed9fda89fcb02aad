package logstore

import (
	"encoding/binary"
	"errors"

	"github.com/partfs/partfs/record"
)

// lookupWindow is the first read of a scan: a point lookup reads this much
// (plus whole batches crossing it), and each later window is four times
// larger, so sequential reads soon read ahead in large chunks.
const lookupWindow = 16 << 10

// scanFrom calls fn for each batch of s in [pos, end) in order until fn
// returns true or an error. Batches are size- and CRC-checked by
// record.Scanner; a batch crossing a window's end is read again whole in
// the next, larger window.
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
		window = max(window*4, batchSizeAt(s, pos))
	}
	return nil
}

// batchSizeAt reads the size field of the batch at pos (0 if unreadable).
func batchSizeAt(s *segment, pos int64) int64 {
	var head [record.LogOverhead]byte
	if n, _ := s.log.ReadAt(head[:], pos); n < len(head) {
		return 0
	}
	return record.LogOverhead + int64(int32(binary.BigEndian.Uint32(head[8:])))
}
