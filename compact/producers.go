package compact

import (
	"fmt"
	"io"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// DefaultProducerIDExpirationMs is Kafka's producer.id.expiration.ms: a
// producer with no open transaction and no batch for this long is no
// longer active.
const DefaultProducerIDExpirationMs = 86_400_000

// producerLast is what Kafka's producer state keeps of a producer that
// the cleaner needs (ProducerStateManager.lastRecordsOfActiveProducers):
// the last offset of its last data batch since its epoch began (-1 when a
// marker with a new epoch came after it), its epoch, the time of its last
// batch and whether a transaction of it is open.
type producerLast struct {
	dataOffset int64
	epoch      int16
	ts         int64
	open       bool
}

// producers is the last batch of each producer of a log.
type producers map[int64]*producerLast

// observe notes a V2 batch with a producer id, in offset order.
func (p producers) observe(h *record.BatchHeader) {
	e := p[h.ProducerID]
	if e == nil {
		e = &producerLast{dataOffset: -1, epoch: h.ProducerEpoch}
		p[h.ProducerID] = e
	}
	if h.ProducerEpoch != e.epoch {
		e.dataOffset, e.epoch = -1, h.ProducerEpoch
	}
	e.ts = h.MaxTimestamp
	if h.IsControl() {
		e.open = false
		return
	}
	e.dataOffset = h.LastOffset()
	e.open = h.IsTransactional()
}

// keepEmpty reports whether a batch that lost all its records stays as an
// empty header: only the last batch of a producer still active at nowMs
// (its last data batch, or the marker that began its epoch), as Kafka's
// cleaner keeps it to preserve the producer's sequence and epoch.
func (p producers) keepEmpty(h *record.BatchHeader, nowMs int64) bool {
	e := p[h.ProducerID]
	if h.ProducerID < 0 || e == nil || (!e.open && nowMs-e.ts >= DefaultProducerIDExpirationMs) {
		return false
	}
	if e.dataOffset >= 0 {
		return h.LastOffset() == e.dataOffset
	}
	return h.IsControl() && h.ProducerEpoch == e.epoch
}

// scanProducers reads every batch header of the log (the active segment
// too) into the producers' last batches. Only headers are read, through a
// buffer of headerBuffer bytes: many small batches cost one read.
func (c *Cleaner) scanProducers(log Target, segs []partlog.Segment) (producers, error) {
	p := producers{}
	buf := make([]byte, headerBuffer)
	for _, seg := range segs {
		if err := eachHeader(log, seg, buf, p.observe); err != nil {
			return nil, err
		}
	}
	return p, nil
}

const headerBuffer = 64 << 10

// eachHeader calls fn with the header of each V2 batch of seg that has a
// producer id.
func eachHeader(log Target, seg partlog.Segment, buf []byte, fn func(*record.BatchHeader)) error {
	r, release, err := log.SegmentReader(seg)
	if err != nil {
		return fmt.Errorf("open %s: %w", segmentName(log, seg), err)
	}
	defer release()
	start, n := int64(0), 0 // buf[:n] holds the bytes at start
	for pos := int64(0); pos < seg.Size; {
		if pos < start || pos+record.BatchHeaderSize > start+int64(n) && start+int64(n) < seg.Size {
			start = pos
			n, err = r.ReadAt(buf[:min(int64(len(buf)), seg.Size-pos)], pos)
			if err != nil && err != io.EOF {
				return fmt.Errorf("read %s at %d: %w", segmentName(log, seg), pos, err)
			}
		}
		h, err := record.ParseHeader(buf[pos-start : n])
		if err != nil {
			return fmt.Errorf("%s at %d: %w", segmentName(log, seg), pos, err)
		}
		if h.Magic >= 2 && h.ProducerID >= 0 {
			fn(&h)
		}
		pos += h.Size()
	}
	return nil
}
