package logstore

import (
	"errors"
	"io"
	"sync"

	"github.com/partfs/partfs/record"
)

// lookupWindow is the first read of a scan: a point lookup reads this much
// (plus a batch crossing it); the rest of the scan is left to one
// record.Scanner, which reads ahead in its own chunks.
const lookupWindow = 16 << 10

// scanners are reused between scans (with their read-ahead buffers).
var scanners = sync.Pool{New: func() any { return new(record.Scanner) }}

// scanFrom calls fn for each batch of s in [pos, end) in order until fn
// returns true or an error. Batches are size- and CRC-checked by
// record.Scanner; a batch crossing the first window's end is read again
// by the scan of the rest.
func scanFrom(s *segment, pos, end int64, fn func(b *record.Batch) (bool, error)) error {
	return scanWindows(s, pos, end, lookupWindow, fn)
}

// scanWindows is scanFrom with a first window of the given size. It uses
// one pooled scanner, dropped afterwards if a huge batch grew its buffer;
// a window of mapMin bytes or more is scanned through a mapping of the
// segment instead where its file can be mapped (scanMapped).
func scanWindows(s *segment, pos, end, window int64, fn func(b *record.Batch) (bool, error)) error {
	sc := scanners.Get().(*record.Scanner)
	largest := int64(0)
	defer func() {
		sc.Reset(noFile{}, 0, 0, "") // drop the file, keep the buffer
		if largest <= maxKeptBuffer {
			scanners.Put(sc)
		}
	}()
	mappable := true
	for pos < end {
		if mappable && window >= mapMin {
			next, done, err := scanMapped(s, pos, end, firstPopulate, fn)
			if done {
				return err
			}
			pos, mappable = next, false
		}
		wend := min(end, pos+window)
		sc.Reset(s.log, pos, wend, s.path)
		for sc.Next() {
			b := sc.Batch()
			largest = max(largest, int64(len(b.Raw)))
			if stop, err := fn(b); err != nil || stop {
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

// noFile is the reader a pooled scanner holds between scans.
type noFile struct{}

func (noFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
