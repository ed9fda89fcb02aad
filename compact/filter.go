package compact

import (
	"encoding/binary"

	"github.com/partfs/partfs/record"
)

// retainRule is Kafka's per-record retention rule of a cleaning round
// (LogCleaner.shouldRetainRecord).
type retainRule struct {
	offsets *OffsetMap
	nowMs   int64
	// retainLegacyDeletes keeps V0/V1 tombstones (decided per segment from
	// its mtime, as Kafka does for messages without a delete horizon).
	retainLegacyDeletes bool
}

// keep reports whether rec of the batch with header h survives: records past
// the map's coverage always do; otherwise a record needs a key, must be the
// latest of its key, and if it is a tombstone its delete horizon must not
// have passed.
func (r *retainRule) keep(h *record.BatchHeader, rec *record.Record) bool {
	var kh keyHash
	if rec.Key != nil {
		kh = r.offsets.hash(rec.Key)
	}
	return r.keepHashed(h, rec, kh)
}

// keepHashed is keep with the key's hash already computed.
func (r *retainRule) keepHashed(h *record.BatchHeader, rec *record.Record, kh keyHash) bool {
	if rec.Offset > r.offsets.LatestOffset() {
		return true
	}
	if rec.Key == nil || rec.Offset < r.offsets.get(kh) {
		return false
	}
	if rec.Value != nil {
		return true
	}
	if h.Magic < 2 {
		return r.retainLegacyDeletes
	}
	if horizon, ok := h.DeleteHorizon(); ok {
		return r.nowMs < horizon
	}
	return true
}

// Stats count the work of cleanings.
type Stats struct {
	BytesRead      int64 // log bytes read (both passes)
	BytesWritten   int64 // bytes of cleaned segments written
	RecordsRead    int64 // records read by the cleaning pass
	RecordsRemoved int64 // records the cleaning pass dropped
	BatchesCopied  int64 // batches kept byte for byte
	BatchesRebuilt int64 // batches rewritten without some records or with a new horizon
	Segments       int64 // source segments cleaned
	Rounds         int64 // cleaning rounds (one offset map each)
	MapGrowths     int64 // times a round's offset map grew and was built again
}

// filter applies a retainRule to whole batches.
type filter struct {
	rule              retainRule
	deleteRetentionMs int64
	stats             *Stats
	// txns follows the transactions of the pass (nil: none are aborted,
	// markers stay); producers keeps emptied batches of active producers.
	txns      *txnState
	producers producers
	roundEnd  int64 // the first uncleanable offset of the round

	dec    record.Decoder
	w      batchWriter
	kept   []record.Record
	hashes []keyHash
	hdrs   []record.Header
	arena  []byte
}

// batch appends to dst what remains of b after cleaning: b itself when
// nothing changes, a rebuilt batch, an empty header for an emptied batch
// that was the last of an active producer, or nothing. Kafka's rules
// (LogCleaner's checkBatchRetention and MemoryRecords.filterTo): a batch of
// an aborted transaction loses all its records; a marker stays until its
// transaction has no batch left, then gets a delete horizon, and goes once
// the horizon has passed.
func (f *filter) batch(dst []byte, b *record.Batch) ([]byte, error) {
	h := &b.Header
	if h.Magic < 2 {
		return f.legacy(dst, b)
	}
	if h.IsControl() {
		return f.control(dst, b)
	}
	if f.txns != nil && f.txns.onData(h) {
		f.stats.RecordsRead += int64(h.NumRecords)
		f.stats.RecordsRemoved += int64(h.NumRecords)
		return f.empty(dst, h), nil
	}
	read, tombstones, err := f.decide(b)
	if err != nil {
		return dst, err
	}
	f.stats.RecordsRead += int64(read)
	f.stats.RecordsRemoved += int64(read - len(f.kept))
	horizon, hasHorizon := h.DeleteHorizon()
	if len(f.kept) == read && (hasHorizon || !tombstones) {
		f.stats.BatchesCopied++
		return append(dst, b.Raw...), nil
	}
	if len(f.kept) == 0 {
		return f.empty(dst, h), nil
	}
	if !hasHorizon {
		horizon = 0
		if tombstones {
			horizon = f.rule.nowMs + f.deleteRetentionMs
		}
	}
	f.stats.BatchesRebuilt++
	return f.w.appendBatch(dst, h, f.kept, horizon)
}

// empty appends what stays of a batch that lost all its records: an empty
// header if it was the last batch of an active producer or ends the
// cleaning round (so that the last offset is not lost), else nothing.
func (f *filter) empty(dst []byte, h *record.BatchHeader) []byte {
	if f.producers.keepEmpty(h, f.rule.nowMs) || h.LastOffset()+1 == f.roundEnd {
		return f.w.appendEmpty(dst, h)
	}
	return dst
}

// control cleans a control batch: a marker that may be retired gets a
// delete horizon the first time, and goes (leaving an empty header if it
// is its producer's last batch) once the horizon has passed.
func (f *filter) control(dst []byte, b *record.Batch) ([]byte, error) {
	h := &b.Header
	typ, recs, err := f.controlRecords(b)
	if err != nil {
		return dst, err
	}
	retire := f.txns != nil && f.txns.onControl(h, typ)
	horizon, hasHorizon := h.DeleteHorizon()
	f.stats.RecordsRead += int64(len(recs))
	switch {
	case len(recs) == 0 || retire && hasHorizon && horizon <= f.rule.nowMs:
		f.stats.RecordsRemoved += int64(len(recs))
		return f.empty(dst, h), nil
	case retire && !hasHorizon:
		f.stats.BatchesRebuilt++
		return f.w.appendBatch(dst, h, recs, f.rule.nowMs+f.deleteRetentionMs)
	}
	f.stats.BatchesCopied++
	return append(dst, b.Raw...), nil
}

// controlRecords copies a control batch's records and returns the type of
// the first (-1 if none).
func (f *filter) controlRecords(b *record.Batch) (int, []record.Record, error) {
	f.kept, f.hdrs, f.arena = f.kept[:0], f.hdrs[:0], f.arena[:0]
	err := f.dec.Records(b, func(r *record.Record) bool {
		f.keepCopy(r)
		return true
	})
	typ := -1
	if len(f.kept) > 0 && len(f.kept[0].Key) >= 4 {
		typ = int(int16(binary.BigEndian.Uint16(f.kept[0].Key[2:])))
	}
	return typ, f.kept, err
}

// decide copies b's records and keeps those the rule retains in f.kept.
// The keys' map slots are touched for the whole batch first, so that their
// cache misses overlap.
func (f *filter) decide(b *record.Batch) (read int, tombstones bool, err error) {
	f.kept, f.hashes, f.hdrs, f.arena = f.kept[:0], f.hashes[:0], f.hdrs[:0], f.arena[:0]
	m := f.rule.offsets
	err = f.dec.Records(b, func(r *record.Record) bool {
		f.keepCopy(r)
		var kh keyHash
		if r.Key != nil {
			kh = m.hash(r.Key)
		}
		f.hashes = append(f.hashes, kh)
		return true
	})
	if err != nil {
		return 0, false, err
	}
	m.touch(f.hashes)
	read = len(f.kept)
	n := 0
	for i := range f.kept {
		if f.rule.keepHashed(&b.Header, &f.kept[i], f.hashes[i]) {
			tombstones = tombstones || f.kept[i].Value == nil
			f.kept[n] = f.kept[i]
			n++
		}
	}
	f.kept = f.kept[:n]
	return read, tombstones, nil
}

// legacy keeps a V0/V1 message or wrapper whole if any record in it
// survives: partfs never writes the legacy formats, so a wrapper is not
// rebuilt without its dead records.
func (f *filter) legacy(dst []byte, b *record.Batch) ([]byte, error) {
	read, kept := 0, 0
	err := f.dec.Records(b, func(r *record.Record) bool {
		read++
		if f.rule.keep(&b.Header, r) {
			kept++
		}
		return true
	})
	if err != nil {
		return dst, err
	}
	f.stats.RecordsRead += int64(read)
	if kept == 0 {
		f.stats.RecordsRemoved += int64(read)
		return dst, nil
	}
	f.stats.BatchesCopied++
	return append(dst, b.Raw...), nil
}

// keepCopy appends a copy of r (out of the decoder's buffers) to f.kept.
func (f *filter) keepCopy(r *record.Record) {
	c := record.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: f.copyBytes(r.Key), Value: f.copyBytes(r.Value)}
	if len(r.Headers) > 0 {
		start := len(f.hdrs)
		for _, h := range r.Headers {
			f.hdrs = append(f.hdrs, record.Header{Key: h.Key, Value: f.copyBytes(h.Value)})
		}
		c.Headers = f.hdrs[start:len(f.hdrs):len(f.hdrs)]
	}
	f.kept = append(f.kept, c)
}

// copyBytes copies b into the arena (nil stays nil). Slices handed out
// before the arena grows keep pointing at the old, unchanged array.
func (f *filter) copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(f.arena)
	f.arena = append(f.arena, b...)
	return f.arena[start:len(f.arena):len(f.arena)]
}
