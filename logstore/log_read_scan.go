package logstore

import (
	"errors"
	"io"
	"sync"

	"github.com/partfs/partfs/record"
)

// firstRead is the first read of a scan: a point lookup reads this much
// (plus a batch crossing it); the rest of the scan is left to one
// record.Scanner, which reads ahead in its own chunks.
const firstRead = 16 << 10

// scanners are reused between scans (with their read-ahead buffers).
var scanners = sync.Pool{New: func() any { return new(record.Scanner) }}

// scanFrom calls fn for each batch of s in [pos, end) in order until fn
// returns true or an error. Batches are size- and CRC-checked by
// record.Scanner; a batch crossing the first read's end is read again
// by the scan of the rest.
func scanFrom(s *segment, pos, end int64, fn func(b *record.Batch) (bool, error)) error {
	return scanWithFirst(s, pos, end, firstRead, fn)
}

// scanWithFirst is scanFrom with a first read of the given size. It uses
// one pooled scanner, dropped afterwards if a huge batch grew its buffer;
// a read of mapMin bytes or more is scanned through a mapping of the
// segment instead where its file can be mapped (scanMapped).
func scanWithFirst(s *segment, pos, end, read int64, fn func(b *record.Batch) (bool, error)) error {
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
		if mappable && read >= mapMin {
			next, done, err := scanMapped(s, pos, end, firstPopulate, fn)
			if done {
				return err
			}
			pos, mappable = next, false
		}
		rend := min(end, pos+read)
		sc.Reset(s.log, pos, rend, s.path)
		for sc.Next() {
			b := sc.Batch()
			largest = max(largest, int64(len(b.Raw)))
			if stop, err := fn(b); err != nil || stop {
				return err
			}
		}
		if err := sc.Err(); err != nil && (rend == end || !errors.Is(err, record.ErrTruncated)) {
			return err
		}
		pos = sc.Pos()
		read = end - pos
	}
	return nil
}

// noFile is the reader a pooled scanner holds between scans.
type noFile struct{}

func (noFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
