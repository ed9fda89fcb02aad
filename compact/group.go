package compact

import (
	"math"

	"github.com/partfs/partfs/partlog"
)

// Index entries are 8 and 12 bytes (docs/kafka-format.md §3).
const (
	offsetIndexEntry = 8
	timeIndexEntry   = 12
)

// groupSegmentsBySize splits consecutive segments into groups that are
// cleaned into one segment each, as Kafka's groupSegmentsBySize: a group
// grows while the sum of its log sizes stays <= segment.bytes, the sums of
// its index and time index sizes stay <= segment.index.bytes, and its
// offsets stay within a 32-bit relative offset of its first base offset.
// Index sizes are estimated from the log size and index.interval.bytes (at
// most one entry per interval, plus one), which bounds what the cleaned
// segment can need.
func groupSegmentsBySize(segs []partlog.Segment, cfg LogConfig, firstUncleanable int64) [][]partlog.Segment {
	var groups [][]partlog.Segment
	for i := 0; i < len(segs); {
		j := i + 1
		logSize := segs[i].Size
		idx, tidx := indexEstimate(segs[i], cfg)
		for ; j < len(segs); j++ {
			next := segs[j]
			ni, nt := indexEstimate(next, cfg)
			if logSize+next.Size > cfg.SegmentBytes || idx+ni > cfg.SegmentIndexBytes || tidx+nt > cfg.SegmentIndexBytes {
				break
			}
			if next.Size > 0 && lastOffsetOf(segs[j:], firstUncleanable)-segs[i].Base > math.MaxInt32 {
				break
			}
			logSize += next.Size
			idx, tidx = idx+ni, tidx+nt
		}
		groups = append(groups, segs[i:j:j])
		i = j
	}
	return groups
}

// lastOffsetOf estimates the last offset of segs[0]: the next segment's
// base (or firstUncleanable) minus one.
func lastOffsetOf(segs []partlog.Segment, firstUncleanable int64) int64 {
	if len(segs) > 1 {
		return segs[1].Base - 1
	}
	return firstUncleanable - 1
}

// indexEstimate bounds the bytes of a segment's offset and time index.
func indexEstimate(s partlog.Segment, cfg LogConfig) (int64, int64) {
	interval := max(cfg.IndexIntervalBytes, 1)
	entries := s.Size/interval + 1
	return entries * offsetIndexEntry, entries * timeIndexEntry
}
