package logstore

import (
	"fmt"
	"math"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// An append is encoded once. Uncompressed, in one pass: record.AppendBatches
// cuts a batch before the record that would take it over the limit (or
// Options.BatchBytes, if set and smaller); a record larger than that gets
// a batch of its own, refused only when over the limit.
// Compressed, its records are cut into batches up front from their exact
// uncompressed sizes (planBatches), then each batch is encoded and
// compressed; encodeSplit still checks every encoded batch against the
// limit and halves one that is over it, so the plan is an optimization,
// never the guard.

// encodeRecords is encodeAll that returns the number of records and
// encodes nothing when there are none. REQUIRES: mu held.
func (l *Log) encodeRecords(recs []record.Record, base int64, now time.Time) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	return len(recs), l.encodeAll(recs, base, now)
}

// encodeAll encodes recs into l.buf as batches no larger than the batch
// limit, with their end positions in l.spans. REQUIRES: mu held.
func (l *Log) encodeAll(recs []record.Record, base int64, now time.Time) error {
	opt, err := l.batchOptions(now.UnixMilli())
	if err != nil {
		return err
	}
	l.spans = l.spans[:0]
	l.buf, err = l.encodePlanned(l.buf[:0], recs, base, opt, l.batchLimit())
	if err != nil {
		l.buf = l.buf[:0]
	}
	return err
}

// batchLimit is the largest batch an append may write: max.message.bytes,
// or segment.bytes if smaller. REQUIRES: mu held.
func (l *Log) batchLimit() int64 {
	limit := int64(l.cfg.MaxMessageBytes)
	if l.cfg.SegmentBytes > 0 && l.cfg.SegmentBytes < limit {
		limit = l.cfg.SegmentBytes
	}
	return limit
}

// cutAt is where the uncompressed encoders cut a batch under limit: at
// the limit, so all records of one append are one batch (docs/spec.md §4), unless
// Options.BatchBytes asks for smaller batches, as Kafka's producer
// batch.size cuts what it sends. REQUIRES: mu held.
func (l *Log) cutAt(limit int64) int {
	if l.store != nil && l.store.opt.BatchBytes > 0 {
		return int(min(limit, int64(l.store.opt.BatchBytes)))
	}
	return int(limit)
}

// wholeTryFactor bounds the compressed writes first encoded as one batch:
// a write of more than this many times the limit (uncompressed) would need
// better compression than that to fit, so it goes straight to the plan.
const wholeTryFactor = 4

// compressSlack is room left in a planned compressed batch for the codec's
// framing, which incompressible records pay on top of their size
// (record.Codec.MaxFraming).
func compressSlack(codec record.Codec, limit int64) int64 {
	return int64(codec.MaxFraming(int(min(limit, math.MaxInt32))))
}

// encodePlanned appends recs to dst: uncompressed, as encodeBatches cuts
// them; compressed, as one batch when sizeBound shows it fits, else as the
// batches planBatches cuts from a limit less compressSlack (so
// incompressible records still fit once framed). A compressed write of up
// to wholeTryFactor times the limit is first encoded whole, since
// compression usually makes it fit. REQUIRES: mu held.
func (l *Log) encodePlanned(dst []byte, recs []record.Record, base int64, opt record.BatchOptions, limit int64) ([]byte, error) {
	if opt.Codec == record.None {
		return l.encodeBatches(dst, recs, base, opt, limit)
	}
	planLimit := limit - compressSlack(opt.Codec, limit)
	bound := sizeBound(recs)
	if bound <= planLimit {
		return l.encodeSplit(dst, recs, base, opt, limit)
	}
	if bound <= wholeTryFactor*limit {
		if out, ok := l.encodeWhole(dst, recs, base, opt, limit); ok {
			return out, nil
		}
	}
	l.planBatches(recs, planLimit, opt.DefaultTimestampMs)
	start := 0
	for _, end := range l.cuts {
		var err error
		dst, err = l.encodeSplit(dst, recs[start:end], base+int64(start), opt, limit)
		if err != nil {
			return dst, err
		}
		start = end
	}
	return dst, nil
}

// encodeBatches appends recs to dst as uncompressed batches in one pass,
// each cut before the record that would take it over l.cutAt(limit), and
// refuses a record too large for a batch of its own under limit. REQUIRES: mu held.
func (l *Log) encodeBatches(dst []byte, recs []record.Record, base int64, opt record.BatchOptions, limit int64) ([]byte, error) {
	out, spans, err := l.enc.AppendBatches(dst, base, recs, opt, l.cutAt(limit), l.spans)
	return l.checkBatches(dst, out, spans, base, limit, err)
}

// encodeLines is encodeAll of the records record.AppendLineRecords makes
// of chunks; uncompressed, it encodes the lines where they lie. It returns
// the number of records. REQUIRES: mu held.
func (l *Log) encodeLines(chunks [][]byte, base int64, now time.Time) (int, error) {
	opt, err := l.batchOptions(now.UnixMilli())
	if err != nil {
		return 0, err
	}
	if opt.Codec != record.None {
		return l.encodeRecords(record.AppendLineRecords(nil, chunks...), base, now)
	}
	l.spans = l.spans[:0]
	limit := l.batchLimit()
	p := l.startPipe(linesBytes(chunks))
	var pipe *record.LinePipe
	if p != nil {
		pipe = &p.LinePipe
	}
	out, spans, n, err := l.enc.AppendLineBatchesPiped(l.buf[:0], base, chunks, opt, l.cutAt(limit), l.spans, pipe)
	if p != nil && err != nil {
		p.stop()
		l.pipedLen = p.written
	} else if p != nil {
		perr := p.finish() // done already: the encoder said so
		if l.pipedLen = p.written; perr != nil {
			l.buf = out[:0]
			return 0, fmt.Errorf("write %s: %w", p.path, perr)
		}
	}
	if l.buf, err = l.checkBatches(l.buf[:0], out, spans, base, limit, err); err != nil {
		return 0, err
	}
	return n, nil
}

// linesBytes is the bytes of chunks.
func linesBytes(chunks [][]byte) int {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	return n
}

// checkBatches takes the uncompressed batches an encoder appended to dst
// (out, with their ends in spans after l.spans) into l.spans, or refuses
// them all when one is over limit: a record too large for a batch of its
// own. REQUIRES: mu held.
func (l *Log) checkBatches(dst, out []byte, spans []int, base, limit int64, err error) ([]byte, error) {
	if err != nil {
		return out, fmt.Errorf("encode batches at offset %d: %w", base, err)
	}
	prev := len(dst)
	for _, end := range spans[len(l.spans):] {
		if int64(end-prev) > limit {
			h, _ := record.ParseHeader(out[prev:end])
			return out[:len(dst)], tooLarge(h.BaseOffset, end-prev, limit)
		}
		prev = end
	}
	l.spans = spans
	return out, nil
}

// tooLarge is the error for a record that does not fit a batch alone.
func tooLarge(offset int64, size int, limit int64) error {
	return fmt.Errorf("record at offset %d is %d bytes as a batch, above max.message.bytes %d: %w",
		offset, size, limit, partlog.ErrTooLarge)
}

// encodeWhole appends recs to dst as one batch if it encodes within limit;
// otherwise it reports false and dst keeps its length (an encoding error
// is left for encodeSplit to report). REQUIRES: mu held.
func (l *Log) encodeWhole(dst []byte, recs []record.Record, base int64, opt record.BatchOptions, limit int64) ([]byte, bool) {
	out, err := l.enc.AppendBatch(dst, base, recs, opt)
	if err != nil || int64(len(out)-len(dst)) > limit {
		return out[:len(dst)], false
	}
	l.spans = append(l.spans, len(out))
	return out, true
}

// Upper bounds of the framing of a record in a records area (length,
// attributes, timestamp delta, offset delta, key and value lengths, header
// count: varints of at most 5 bytes, 10 for the timestamp delta) and of a
// header (key and value lengths).
const (
	maxRecordFraming = 5 + 1 + 10 + 5 + 5 + 5 + 5
	maxHeaderFraming = 5 + 5
)

// sizeBound is an upper bound of recs' size as one uncompressed batch,
// cheaper than planBatches: lengths only, no varint sizes.
func sizeBound(recs []record.Record) int64 {
	n := int64(record.BatchHeaderSize) + int64(len(recs))*maxRecordFraming
	for i := range recs {
		r := &recs[i]
		n += int64(len(r.Key) + len(r.Value))
		for j := range r.Headers {
			h := &r.Headers[j]
			n += maxHeaderFraming + int64(len(h.Key)+len(h.Value))
		}
	}
	return n
}

// planBatches fills l.cuts with the end index of each batch of recs, cutting
// before a record that would take the batch's uncompressed size over limit
// (a record too large alone gets a batch of its own, which encodeSplit
// refuses); defTs is the batches' DefaultTimestampMs. It returns the total
// uncompressed size of the batches. REQUIRES: mu held.
func (l *Log) planBatches(recs []record.Record, limit, defTs int64) int64 {
	l.cuts = l.cuts[:0]
	if len(recs) == 0 {
		l.cuts = append(l.cuts, 0)
		return record.BatchHeaderSize
	}
	var total int64
	start, baseTs, size := 0, record.TimestampOf(&recs[0], defTs), int64(record.BatchHeaderSize)
	for i := range recs {
		r := &recs[i]
		ts := record.TimestampOf(r, defTs)
		n := record.RecordSize(r, ts-baseTs, int64(i-start))
		if size+n > limit && i > start {
			l.cuts = append(l.cuts, i)
			total += size
			start, baseTs = i, ts
			size, n = record.BatchHeaderSize, record.RecordSize(r, 0, 0)
		}
		size += n
	}
	l.cuts = append(l.cuts, len(recs))
	return total + size
}

// encodeSplit appends one batch of recs, or splits recs in halves while the
// batch is larger than limit. REQUIRES: mu held.
func (l *Log) encodeSplit(dst []byte, recs []record.Record, base int64, opt record.BatchOptions, limit int64) ([]byte, error) {
	start := len(dst)
	out, err := l.enc.AppendBatch(dst, base, recs, opt)
	if err != nil {
		return dst[:start], fmt.Errorf("encode batch at offset %d: %w", base, err)
	}
	size := len(out) - start
	if int64(size) <= limit {
		l.spans = append(l.spans, len(out))
		return out, nil
	}
	out = out[:start]
	if len(recs) == 1 {
		return out, tooLarge(base, size, limit)
	}
	half := len(recs) / 2
	out, err = l.encodeSplit(out, recs[:half], base, opt, limit)
	if err != nil {
		return out, err
	}
	return l.encodeSplit(out, recs[half:], base+int64(half), opt, limit)
}

// batchOptions maps the topic configuration to encoder options; records
// without a timestamp (<= 0) take nowMs, the time of the append.
// REQUIRES: mu held.
func (l *Log) batchOptions(nowMs int64) (record.BatchOptions, error) {
	opt := record.BatchOptions{DefaultTimestampMs: nowMs}
	c, err := l.cfg.Codec()
	if err != nil {
		return opt, err
	}
	opt.Codec = c
	if l.cfg.LogAppendTime() {
		opt.LogAppendTime, opt.LogAppendTimeMs = true, nowMs
	}
	return opt, nil
}
