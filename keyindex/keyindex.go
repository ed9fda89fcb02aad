// Package keyindex owns the key -> latest offset lookup behind `@key/K`
// (docs/spec.md §2): built once per Index by one scan of the partition, then kept
// current by reading only the records appended since (it follows
// partlog.Log.Changed), so a lookup never scans the partition.
//
// An entry is a 64-bit hash of the key (hash/maphash, a random seed per
// Index) mapping to the offset of the key's latest record. A lookup reads
// the record at that offset and compares its key, so a hash collision can
// never return another key's value: on a mismatch the lookup falls back to
// a scan for that one key (expected about never: n²/2⁶⁵ for n keys). Null
// keys are not indexed.
//
// Compaction keeps every record's offset, so a compaction swap needs no
// fix-up of entries: the latest record of a key is never removed by the
// cleaner except a tombstone past its delete horizon, and an entry whose
// record is gone (that, or retention below the log start offset) reads as
// "no value" and is dropped at that lookup; when retention moves the log
// start offset, one pass drops every entry below it. If the log end moves
// backwards (truncation) the index is rebuilt.
//
// Memory: one Go map[uint64]int64 entry per distinct key ever indexed
// (16 bytes of payload in swiss-table groups, more with where the map is
// in its growth cycle; TestMemoryPerKey holds it to 48 bytes per key at
// 200,000 keys). Keys themselves are not held in memory.
package keyindex

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"sort"
	"sync"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Index is the key lookup of one partition. It is safe for concurrent use.
type Index struct {
	log  partlog.Log
	hash func(key []byte) uint64 // maphash with a per-Index seed; tests force collisions

	mu      sync.Mutex
	built   bool
	changed <-chan struct{}  // REQUIRES: mu held
	next    int64            // offsets below next are indexed; REQUIRES: mu held
	start   int64            // log start offset at the last sweep; REQUIRES: mu held
	latest  map[uint64]int64 // key hash -> offset; REQUIRES: mu held
}

// New returns the index of log. Nothing is read until the first Latest.
func New(log partlog.Log) *Index {
	seed := maphash.MakeSeed()
	hash := func(key []byte) uint64 { return maphash.Bytes(seed, key) }
	return &Index{log: log, hash: hash, latest: map[uint64]int64{}}
}

// Latest returns the latest record with key. ok is false when the key has
// no record or its latest record is a tombstone.
func (x *Index) Latest(key []byte) (rec record.Record, ok bool, err error) {
	if key == nil {
		return record.Record{}, false, nil
	}
	h := x.hash(key)
	x.mu.Lock()
	err = x.catchUp()
	off, found := x.latest[h]
	x.mu.Unlock()
	if err != nil || !found {
		return record.Record{}, false, err
	}
	rec, state, err := x.readAt(off, key)
	if err != nil {
		return record.Record{}, false, err
	}
	switch state {
	case gone:
		x.forget(h, off)
		return record.Record{}, false, nil
	case otherKey:
		rec, found, err = x.scanFor(key)
		if err != nil || !found {
			return record.Record{}, false, err
		}
	}
	return rec, rec.Value != nil, nil
}

// Len returns the number of indexed key hashes (after catching up).
func (x *Index) Len() (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	err := x.catchUp()
	return len(x.latest), err
}

// forget drops the entry h if it still points at off.
func (x *Index) forget(h uint64, off int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.latest[h] == off {
		delete(x.latest, h)
	}
}

// catchUp indexes the records appended since the last call (all of them
// the first time). REQUIRES: mu held.
func (x *Index) catchUp() error {
	// A Log that learns of other writers' appends only when it asks for
	// its offsets (a cluster's) closes Changed when it does: ask first.
	x.log.EndOffset()
	if x.built {
		select {
		case <-x.changed:
		default:
			return nil
		}
	}
	ch := x.log.Changed() // taken before the snapshot, so no change is missed
	if x.built && x.log.EndOffset() < x.next {
		x.latest, x.next = map[uint64]int64{}, 0 // truncated: rebuild
	}
	next, err := partlog.ReadFrom(x.log, x.next, func(r *record.Record) {
		if r.Key != nil {
			x.latest[x.hash(r.Key)] = r.Offset
		}
	})
	if err != nil {
		return fmt.Errorf("keyindex %s-%d: index at offset %d: %w", x.log.Topic(), x.log.Partition(), next, err)
	}
	x.next, x.changed, x.built = next, ch, true
	x.sweep()
	return nil
}

// sweep drops the entries below the log start offset once retention has
// moved it (one pass over the map per move). REQUIRES: mu held.
func (x *Index) sweep() {
	start := x.log.StartOffset()
	if start <= x.start {
		return
	}
	for h, off := range x.latest {
		if off < start {
			delete(x.latest, h)
		}
	}
	x.start = start
}

type readState int

const (
	same     readState = iota // the record at the offset has the key
	gone                      // no record at the offset any more
	otherKey                  // a hash collision: another key's record
)

// readAt reads the record at off and checks its key.
func (x *Index) readAt(off int64, key []byte) (record.Record, readState, error) {
	segs, release := x.log.Segments()
	defer release()
	i := sort.Search(len(segs), func(i int) bool { return segs[i].Next > off })
	if i == len(segs) || off < segs[i].Base || off < x.log.StartOffset() {
		return record.Record{}, gone, nil
	}
	var rec record.Record
	state := gone
	err := x.log.Read(segs[i], off, func(r *record.Record) bool {
		if r.Offset == off {
			state = otherKey
			if bytes.Equal(r.Key, key) {
				state, rec = same, r.Clone()
			}
		}
		return false
	})
	if err != nil {
		return record.Record{}, gone, fmt.Errorf("keyindex %s-%d: read offset %d: %w", x.log.Topic(), x.log.Partition(), off, err)
	}
	return rec, state, nil
}

// scanFor finds the latest record of key by reading the whole partition;
// only used after a hash collision.
func (x *Index) scanFor(key []byte) (record.Record, bool, error) {
	segs, release := x.log.Segments()
	defer release()
	var rec record.Record
	found := false
	for _, seg := range segs {
		err := x.log.Read(seg, seg.Base, func(r *record.Record) bool {
			if bytes.Equal(r.Key, key) {
				rec, found = r.Clone(), true
			}
			return true
		})
		if err != nil && !errors.Is(err, partlog.ErrNotFound) {
			return record.Record{}, false, fmt.Errorf("keyindex %s-%d: scan segment %d: %w", x.log.Topic(), x.log.Partition(), seg.Base, err)
		}
	}
	return rec, found, nil
}
