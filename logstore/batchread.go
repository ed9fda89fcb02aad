package logstore

import (
	"fmt"
	"sync"

	"github.com/partfs/partfs/record"
)

// batchBuf is a pooled buffer for one batch read whole.
type batchBuf struct{ b []byte }

var batchBufs = sync.Pool{New: func() any { return new(batchBuf) }}

// readBatch reads the batch at pos whose header is h with one pread into
// bb and checks its CRC as record.Scanner does.
func (s *segment) readBatch(bb *batchBuf, pos int64, h *record.BatchHeader) (record.Batch, error) {
	size := int(h.Size())
	if cap(bb.b) < size {
		bb.b = make([]byte, size)
	}
	raw := bb.b[:size]
	if n, err := s.log.ReadAt(raw, pos); n < size {
		return record.Batch{}, fmt.Errorf("read %s at %d: %d of %d bytes: %w", s.path, pos, n, size, err)
	}
	return s.checkedBatch(pos, h, raw)
}

// checkedBatch is the batch at pos with header h and bytes raw once its
// CRC checks out.
func (s *segment) checkedBatch(pos int64, h *record.BatchHeader, raw []byte) (record.Batch, error) {
	if err := record.CheckCRC(h, raw, s.path, pos); err != nil {
		return record.Batch{}, err
	}
	return record.Batch{Header: *h, Pos: pos, Raw: raw, File: s.path}, nil
}

// heldBatch is readBatch of the bytes w holds when it holds the whole
// batch (CRC-checked the same way).
func (s *segment) heldBatch(w *fileWindow, bb *batchBuf, pos int64, h *record.BatchHeader) (record.Batch, error) {
	raw := w.held(pos, h.Size())
	if raw == nil {
		return s.readBatch(bb, pos, h)
	}
	return s.checkedBatch(pos, h, raw[:h.Size()])
}

// putBatchBuf returns bb to the pool unless a huge batch grew it.
func putBatchBuf(bb *batchBuf) {
	if cap(bb.b) <= maxKeptBuffer {
		batchBufs.Put(bb)
	}
}
