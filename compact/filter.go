package compact

import (
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
	// visible returns the offsets of a transactional batch's records that a
	// consumer sees (those of aborted transactions are not); nil means all.
	visible func(h *record.BatchHeader) (map[int64]bool, error)

	dec    record.Decoder
	w      batchWriter
	kept   []record.Record
	hashes []keyHash
	hdrs   []record.Header
	arena  []byte
}

// batch appends to dst what remains of b after cleaning: b itself when
// nothing changes, a rebuilt batch, a header-only batch for a producer's
// batch that lost every record, or nothing.
func (f *filter) batch(dst []byte, b *record.Batch) ([]byte, error) {
	h := &b.Header
	if h.Magic < 2 {
		return f.legacy(dst, b)
	}
	if h.IsControl() {
		f.stats.BatchesCopied++
		return append(dst, b.Raw...), nil
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
		if h.ProducerID >= 0 {
			return f.w.appendEmpty(dst, h), nil
		}
		return dst, nil
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

// decide copies b's records and keeps those the rule retains in f.kept;
// records of aborted transactions are dropped whatever their key, as Kafka
// does.
// The keys' map slots are touched for the whole batch first, so that their
// cache misses overlap.
func (f *filter) decide(b *record.Batch) (read int, tombstones bool, err error) {
	f.kept, f.hashes, f.hdrs, f.arena = f.kept[:0], f.hashes[:0], f.hdrs[:0], f.arena[:0]
	m := f.rule.offsets
	var vis map[int64]bool
	if b.Header.IsTransactional() && f.visible != nil {
		if vis, err = f.visible(&b.Header); err != nil {
			return 0, false, err
		}
	}
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
		aborted := vis != nil && !vis[f.kept[i].Offset]
		if !aborted && f.rule.keepHashed(&b.Header, &f.kept[i], f.hashes[i]) {
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
