package logstore

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// segment is one segment: its .log file and its two sparse indexes.
//
// Fields below "guarded by Log.mu" change only under the owning Log's mutex;
// readers use the values captured in a snapshot (partlog.Segment). The index
// objects are guarded by ixmu, because lookups run without Log.mu.
type segment struct {
	dir   string
	base  int64
	id    uint64
	stamp uint64 // partlog.Segment.Stamp (fileStamp)
	ident fileID // the file written (checkUnchanged)
	log   vfs.File
	path  string // the .log path, used in errors
	// suffix is ".swap" for a segment a read-only store serves from an
	// unfinished swap; "" otherwise.
	suffix string

	ixmu sync.RWMutex
	oidx *index.OffsetIndex
	tidx *index.TimeIndex

	// guarded by Log.mu
	size            int64
	next            int64 // offset after the last batch
	lastPos         int64 // position of the batch ending at size; -1 unknown (or empty)
	maxTs           int64 // largest batch max timestamp, -1 if none
	offMaxTs        int64 // last offset of the batch holding maxTs
	bytesSinceIndex int64
	rollTs          int64 // max timestamp of the first batch; -1 none; see rollTsKnown
	rollTsKnown     bool
	created         time.Time
	jitter          int64
	records         int64 // records a reader sees; -1 = not counted yet
	dirty           bool  // holds appends not yet fsynced
	expanded        bool  // indexes preallocated for appends: close trims (seals) them
	allocEnd        int64 // blocks reserved up to here (past size: released at roll and close)
	noAlloc         bool  // the file cannot reserve blocks
	dead            bool  // no longer in the live segment list

	refs   atomic.Int32 // 1 while live + 1 per snapshot holding it
	closed atomic.Bool
	// batchHint is the size of the last batch a lookup found: how far a
	// lookup's first read reaches past the position it estimates.
	batchHint atomic.Int64
}

// meta is the snapshot view of s. REQUIRES: Log.mu held.
func (s *segment) meta() partlog.Segment {
	return partlog.Segment{Base: s.base, Next: s.next, Size: s.size, MaxTimestamp: s.maxTs, ID: s.id, Stamp: s.stamp}
}

// acquire adds a reference (Log.releaseAll drops it).
func (s *segment) acquire() { s.refs.Add(1) }

func (s *segment) closeFiles() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	regions.dropSegment(s) // before its file closes: no mapping holds its blocks
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(s.log.Close())
	s.ixmu.Lock()
	keep(s.oidx.Close())
	keep(s.tidx.Close())
	s.ixmu.Unlock()
	return first
}

// fits reports whether a batch ending at lastOffset keeps its relative
// offset within 32 bits (index.Indexable).
func (s *segment) fits(lastOffset int64) bool { return index.Indexable(s.base, lastOffset) }

// appendBatch writes one encoded batch at the end of the segment and applies
// Kafka's index rule (LogSegment.append). REQUIRES: Log.mu held.
func (s *segment) appendBatch(raw []byte, h *record.BatchHeader, interval int) error {
	if _, err := s.log.WriteAt(raw, s.size); err != nil {
		return fmt.Errorf("write %s at %d: %w", s.path, s.size, err)
	}
	return s.countBatch(h, interval)
}

// countBatch adds a batch of header h at the segment's end to its size,
// counts and indexes (Kafka's index rule), written there already or by
// writeRun before the append returns. REQUIRES: Log.mu held.
func (s *segment) countBatch(h *record.BatchHeader, interval int) error {
	pos := s.size
	s.size += h.Size()
	s.dirty = true
	if s.records >= 0 {
		s.records += int64(h.NumRecords)
	}
	return s.indexBatch(h, pos, interval)
}

// run is batches of an append counted in a segment: buf[start:end] of
// the encode buffer, the first ending at firstEnd, to be written at pos.
type run struct {
	start, firstEnd, end int
	pos                  int64
}

// writeRun writes the run r of buf with one write whose first batch has
// its CRC inverted, then one of the right CRC: a daemon killed before the
// second leaves no valid first batch, and recovery, which keeps the
// batches up to the first that is not valid, drops the run whole. A run of
// one batch is one write. REQUIRES: Log.mu held.
func (s *segment) writeRun(buf []byte, r run) error {
	if r.end == 0 {
		return nil
	}
	crc := buf[r.start+crcAt : r.start+crcAt+4]
	many := r.firstEnd < r.end
	if many {
		flip(crc)
	}
	_, err := s.log.WriteAt(buf[r.start:r.end], r.pos)
	if many {
		flip(crc)
		if err == nil {
			_, err = s.log.WriteAt(crc, r.pos+crcAt)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s at %d: %w", s.path, r.pos, err)
	}
	return nil
}

// crcAt is where a V2 batch's CRC lies in its header.
const crcAt = 17

// flip inverts b's bits.
func flip(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// indexBatch updates the segment's bookkeeping for a batch at pos that is
// already in the file; used by append and by recovery alike.
func (s *segment) indexBatch(h *record.BatchHeader, pos int64, interval int) error {
	last := h.LastOffset()
	s.lastPos = pos
	if h.MaxTimestamp > s.maxTs {
		s.maxTs, s.offMaxTs = h.MaxTimestamp, last
	}
	if !s.rollTsKnown {
		s.rollTs, s.rollTsKnown = h.MaxTimestamp, true
	}
	if last+1 > s.next {
		s.next = last + 1
	}
	size := h.Size()
	if s.bytesSinceIndex > int64(interval) {
		if err := s.addIndexEntry(last, pos); err != nil {
			return err
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += size
	return nil
}

func (s *segment) addIndexEntry(last, pos int64) error {
	s.ixmu.Lock()
	defer s.ixmu.Unlock()
	if s.oidx.Entries() > 0 && last <= s.oidx.LastOffset() {
		return nil // offsets went backwards in legacy data: no entry, keep reading
	}
	if err := s.oidx.Append(last, int32(pos)); err != nil {
		return fmt.Errorf("offset index of %s: %w", s.path, err)
	}
	if s.maxTs >= 0 {
		if err := s.tidx.MaybeAppend(s.maxTs, s.offMaxTs, false); err != nil {
			return fmt.Errorf("time index of %s: %w", s.path, err)
		}
	}
	return nil
}

// Preallocation: a large append reserves the segment's blocks ahead of it,
// from 1 to 8 MiB (four times the append), never past the segment's size
// limit. Small appends reserve nothing, so idle partitions hold no spare
// space.
const (
	minAllocAppend = 32 << 10
	minAllocStep   = 1 << 20
	maxAllocStep   = 8 << 20
)

// reserve makes sure the blocks of an append of n bytes at the end of the
// segment are reserved before it writes there; limit is the segment's size
// limit. An error means the file cannot reserve blocks: the segment stops
// trying, and the append writes as it would have. REQUIRES: Log.mu held.
func (s *segment) reserve(n int, limit int64) error {
	end := s.size + int64(n)
	if end <= s.allocEnd || n < minAllocAppend || end >= limit || s.noAlloc {
		return nil
	}
	to := min(end+min(max(4*int64(n), minAllocStep), maxAllocStep), limit)
	if err := vfs.Allocate(s.log, s.size, to-s.size); err != nil {
		s.noAlloc = true
		return err
	}
	s.allocEnd = to
	return nil
}

// releaseAlloc gives back blocks reserved past the end of the segment.
// REQUIRES: Log.mu held.
func (s *segment) releaseAlloc() error {
	if s.allocEnd <= s.size {
		return nil
	}
	s.allocEnd = 0
	if err := s.log.Truncate(s.size); err != nil {
		return fmt.Errorf("release blocks reserved past %d in %s: %w", s.size, s.path, err)
	}
	return nil
}
