package logstore

import (
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/partfs/partfs/record"
)

// batchBuf is a pooled buffer for one batch read whole.
type batchBuf struct{ b []byte }

var batchBufs = sync.Pool{New: func() any { return new(batchBuf) }}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readBatch reads the batch at pos whose header is h with one pread into
// bb and checks its CRC (V2: CRC-32C over attributes..end; V0/V1: CRC-32
// over magic..end), as record.Scanner does.
func (s *segment) readBatch(bb *batchBuf, pos int64, h *record.BatchHeader) (record.Batch, error) {
	size := int(h.Size())
	if cap(bb.b) < size {
		bb.b = make([]byte, size)
	}
	raw := bb.b[:size]
	if n, err := s.log.ReadAt(raw, pos); n < size {
		return record.Batch{}, fmt.Errorf("read %s at %d: %d of %d bytes: %w", s.path, pos, n, size, err)
	}
	var got uint32
	if h.Magic >= 2 {
		got = crc32.Checksum(raw[21:], castagnoli)
	} else {
		got = crc32.ChecksumIEEE(raw[16:])
	}
	if got != h.CRC {
		return record.Batch{}, &record.CorruptionError{File: s.path, Pos: pos,
			Reason: fmt.Sprintf("CRC mismatch: stored %08x, computed %08x", h.CRC, got)}
	}
	return record.Batch{Header: *h, Pos: pos, Raw: raw, File: s.path}, nil
}

// putBatchBuf returns bb to the pool unless a huge batch grew it.
func putBatchBuf(bb *batchBuf) {
	if cap(bb.b) <= maxKeptBuffer {
		batchBufs.Put(bb)
	}
}
