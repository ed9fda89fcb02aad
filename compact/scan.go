package compact

import (
	"fmt"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// segmentName is the name a segment gets in errors.
func segmentName(log Target, seg partlog.Segment) string {
	return fmt.Sprintf("%s-%d/%020d.log", log.Topic(), log.Partition(), seg.Base)
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

// buildMap puts the keys of [first, stop) into the offset map, segment by
// segment, until the map is full. It returns the end of what the map
// covers: stop, or the offset after the last key put.
func (c *Cleaner) buildMap(log Target, segs []partlog.Segment, first, stop int64, st *Stats) (int64, error) {
	m := c.offsets
	var dec record.Decoder
	for _, seg := range segs[:len(segs)-1] {
		if seg.Next <= first || seg.Base >= stop {
			continue
		}
		full := false
		err := c.eachBatch(log, seg, st, func(b *record.Batch) (bool, error) {
			if b.Header.LastOffset() < first || b.Header.IsControl() {
				return true, nil
			}
			var err error
			full, err = c.mapBatch(&dec, b, first, stop)
			return !full, err
		})
		if err != nil {
			return 0, err
		}
		if full {
			return m.LatestOffset() + 1, nil
		}
		m.latest = max(m.latest, min(seg.Next, stop)-1) // the whole segment is covered
	}
	return stop, nil
}

// mapBatch puts the keys of b's records in [first, stop) into the map, in
// offset order, touching their slots first so that the cache misses of the
// batch overlap. It reports whether the map became full.
func (c *Cleaner) mapBatch(dec *record.Decoder, b *record.Batch, first, stop int64) (bool, error) {
	m := c.offsets
	c.hashes, c.hashOffsets = c.hashes[:0], c.hashOffsets[:0]
	err := dec.Records(b, func(r *record.Record) bool {
		if r.Key != nil && r.Offset >= first && r.Offset < stop {
			c.hashes = append(c.hashes, m.hash(r.Key))
			c.hashOffsets = append(c.hashOffsets, r.Offset)
		}
		return true
	})
	if err != nil {
		return false, err
	}
	m.touch(c.hashes)
	for i, h := range c.hashes {
		if !m.put(h, c.hashOffsets[i]) {
			return true, nil
		}
	}
	return false, nil
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
		return fmt.Errorf("replace segments %d..%d: %w", group[0].Base, group[len(group)-1].Next, err)
	}
	st.BytesWritten += size
	st.Segments += int64(len(group))
	return nil
}

func (c *Cleaner) writeGroup(log Target, group []partlog.Segment, legacyHorizon int64, cleaned Cleaned, st *Stats) error {
	var out []byte
	for _, seg := range group {
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
