package compact

import (
	"errors"
	"fmt"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// ErrConflict is returned when the segments being cleaned changed under
// the cleaner (retention deleted them, another writer replaced them): the
// cleaning is abandoned and may simply be tried again.
var ErrConflict = errors.New("compact: segments changed during cleaning")

// segmentName is the name a segment gets in errors.
func segmentName(log Target, seg partlog.Segment) string {
	return kafkaname.PartitionDir(log.Topic(), log.Partition()) + "/" + kafkaname.SegmentFile(seg.Base, kafkaname.LogSuffix)
}

// eachBatch calls fn for each batch of seg's snapshot bytes, reporting the
// bytes read to the throttle and the progress hook.
func (c *Cleaner) eachBatch(log Target, seg partlog.Segment, st *Stats, fn func(*record.Batch) (bool, error)) error {
	r, release, err := log.SegmentReader(seg)
	if err != nil {
		return fmt.Errorf("open %s: %w", segmentName(log, seg), err)
	}
	defer release()
	s := record.NewScanner(r, 0, seg.Size, segmentName(log, seg))
	for s.Next() {
		if c.stopping() {
			return errStopped
		}
		b := s.Batch()
		n := b.Header.Size()
		st.BytesRead += n
		c.opt.Throttle.Add(n)
		if c.opt.Progress != nil {
			c.opt.Progress(n)
		}
		more, err := fn(b)
		if err != nil || !more {
			return err
		}
	}
	return s.Err()
}

func (c *Cleaner) stopping() bool {
	select {
	case <-c.opt.stopped:
		return true
	default:
		return false
	}
}

// mapChunk is how many keys buildMap hashes before touching their slots
// and putting them, so that the cache misses of a chunk overlap.
const mapChunk = 128

// buildMap puts the keys of [first, stop) into the offset map, segment by
// segment, until the map is full. A map that fills while it can still
// grow is grown and built again from first (at most a third more map work,
// when every key is distinct). It reads records as a consumer does, so
// records of aborted transactions never become a key's latest. It returns
// the end of what the map covers: stop, or the offset after the last key
// put.
func (c *Cleaner) buildMap(log Target, segs []partlog.Segment, first, stop int64, st *Stats) (int64, error) {
	for {
		full, err := c.mapRange(log, segs, first, stop, st)
		if err != nil {
			return 0, err
		}
		if !full {
			return stop, nil
		}
		if !c.offsets.Grow() {
			return c.offsets.LatestOffset() + 1, nil
		}
		st.MapGrowths++
	}
}

// mapRange puts the keys of [first, stop) into the map and reports whether
// it became full before the end.
func (c *Cleaner) mapRange(log Target, segs []partlog.Segment, first, stop int64, st *Stats) (bool, error) {
	m := c.offsets
	for _, seg := range segs[:len(segs)-1] {
		if seg.Next <= first || seg.Base >= stop {
			continue
		}
		full, err := c.mapSegment(log, seg, first, stop, st)
		if err != nil {
			return false, fmt.Errorf("map %s: %w", segmentName(log, seg), err)
		}
		if full {
			return true, nil
		}
		m.latest = max(m.latest, min(seg.Next, stop)-1) // the whole segment is covered
	}
	return false, nil
}

// mapSegment puts the keys of seg's records in [first, stop) into the map
// in offset order and reports whether the map became full.
func (c *Cleaner) mapSegment(log Target, seg partlog.Segment, first, stop int64, st *Stats) (bool, error) {
	full := false
	acct := c.newAccount(seg, max(first, seg.Base), st)
	c.hashes, c.hashOffsets = c.hashes[:0], c.hashOffsets[:0]
	var stopped error
	err := log.Read(seg, max(first, seg.Base), func(r *record.Record) bool {
		if r.Offset >= stop {
			return false
		}
		if r.Key != nil {
			c.hashes = append(c.hashes, c.offsets.hash(r.Key))
			c.hashOffsets = append(c.hashOffsets, r.Offset)
		}
		if len(c.hashes) == mapChunk {
			full = c.putPending()
			acct.upTo(r.Offset)
			if c.stopping() {
				stopped = errStopped
			}
		}
		return !full && stopped == nil
	})
	switch {
	case stopped != nil:
		return false, stopped
	case err != nil || full:
		return full, err
	}
	full = c.putPending()
	if !full {
		acct.upTo(seg.Next)
	}
	return full, nil
}

// putPending puts the hashed keys collected so far, touching their slots
// first so that their cache misses overlap, and reports whether the map
// became full (the keys after that one are not put).
func (c *Cleaner) putPending() (full bool) {
	c.offsets.touch(c.hashes)
	for i, h := range c.hashes {
		if !c.offsets.put(h, c.hashOffsets[i]) {
			full = true
			break
		}
	}
	c.hashes, c.hashOffsets = c.hashes[:0], c.hashOffsets[:0]
	return full
}

// account reports the bytes of a segment read through Read (which gives
// records, not positions) in proportion to the offsets passed.
type account struct {
	c   *Cleaner
	st  *Stats
	seg partlog.Segment
	at  int64 // offsets below at are accounted for
}

func (c *Cleaner) newAccount(seg partlog.Segment, from int64, st *Stats) *account {
	return &account{c: c, st: st, seg: seg, at: from}
}

func (a *account) upTo(offset int64) {
	span := a.seg.Next - a.seg.Base
	offset = min(offset, a.seg.Next)
	if span <= 0 || offset <= a.at {
		return
	}
	n := a.seg.Size * (offset - a.at) / span
	a.at = offset
	a.st.BytesRead += n
	a.c.opt.Throttle.Add(n)
	if a.c.opt.Progress != nil {
		a.c.opt.Progress(n)
	}
}

// cleanGroup writes the cleaned form of group into one new segment named by
// its first base offset and swaps it in.
func (c *Cleaner) cleanGroup(log Target, group []partlog.Segment, legacyHorizon int64, st *Stats) error {
	cleaned, err := log.NewCleaned(group[0].Base)
	if err != nil {
		return fmt.Errorf("new cleaned segment %d: %w", group[0].Base, err)
	}
	if err := c.writeGroup(log, group, legacyHorizon, cleaned, st); err != nil {
		if aerr := cleaned.Abort(); aerr != nil {
			c.opt.Logger.WithError(aerr).WithField("base", group[0].Base).Warn("abort cleaned segment")
		}
		return err
	}
	size := cleaned.Size()
	if err := log.Replace([]Cleaned{cleaned}, group); err != nil {
		if aerr := cleaned.Abort(); aerr != nil {
			c.opt.Logger.WithError(aerr).WithField("base", group[0].Base).Warn("abort cleaned segment")
		}
		if errors.Is(err, partlog.ErrInvalid) {
			err = fmt.Errorf("%w: %w", ErrConflict, err)
		}
		return fmt.Errorf("replace segments %d..%d: %w", group[0].Base, group[len(group)-1].Next, err)
	}
	st.BytesWritten += size
	st.Segments += int64(len(group))
	return nil
}

func (c *Cleaner) writeGroup(log Target, group []partlog.Segment, legacyHorizon int64, cleaned Cleaned, st *Stats) error {
	var out []byte
	c.filter.txns.cleaned = cleaned
	for _, seg := range group {
		c.filter.txns.add(log.AbortedTxns(seg.Base, seg.Next))
		c.filter.rule.retainLegacyDeletes = log.SegmentModTime(seg).UnixMilli() > legacyHorizon
		err := c.eachBatch(log, seg, st, func(b *record.Batch) (bool, error) {
			var err error
			if out, err = c.filter.batch(out[:0], b); err != nil || len(out) == 0 {
				return true, err
			}
			return true, cleaned.AppendBatch(out)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// firstBatchTimestamp reads the max timestamp of seg's first batch (-1 if
// it has none), Kafka's LogSegment.getFirstBatchTimestamp.
func firstBatchTimestamp(log Target, seg partlog.Segment) (int64, error) {
	ts := int64(-1)
	if seg.Size == 0 {
		return ts, nil
	}
	r, release, err := log.SegmentReader(seg)
	if err != nil {
		return ts, err
	}
	defer release()
	s := record.NewScanner(r, 0, seg.Size, segmentName(log, seg))
	if s.Next() {
		ts = s.Batch().Header.MaxTimestamp // Kafka's rollingBasedTimestamp
	}
	return ts, s.Err()
}
