package logstore

import (
	"fmt"
	"sync"

	"github.com/partfs/partfs/record"
)

// batchBuf is a pooled buffer for one batch read whole; b[:n] was read,
// the batch and up to nextHeaderPeek bytes after it.
type batchBuf struct {
	b []byte
	n int
}

// following returns the bytes read after b when b was read into bb.
func (bb *batchBuf) following(b *record.Batch) []byte {
	if len(b.Raw) == 0 || len(bb.b) == 0 || &b.Raw[0] != &bb.b[0] || bb.n < len(b.Raw) {
		return nil
	}
	return bb.b[len(b.Raw):bb.n]
}

var batchBufs = sync.Pool{New: func() any { return new(batchBuf) }}

// readBatch reads the batch at pos whose header is h with one pread into
// bb, with the start of the next batch's header when there is one (for a
// reader's check of its base offset), and checks its CRC as
// record.Scanner does.
func (s *segment) readBatch(bb *batchBuf, pos int64, h *record.BatchHeader) (record.Batch, error) {
	size := int(h.Size())
	if cap(bb.b) < size+nextHeaderPeek {
		bb.b = make([]byte, size+nextHeaderPeek)
	}
	bb.b = bb.b[:size+nextHeaderPeek]
	n, err := s.log.ReadAt(bb.b, pos)
	if bb.n = n; n < size {
		return record.Batch{}, fmt.Errorf("read %s at %d: %d of %d bytes: %w", s.path, pos, n, size, err)
	}
	return s.checkedBatch(pos, h, bb.b[:size])
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
func (s *segment) heldBatch(w *fileView, bb *batchBuf, pos int64, h *record.BatchHeader) (record.Batch, error) {
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
