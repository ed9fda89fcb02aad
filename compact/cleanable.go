package compact

import (
	"github.com/partfs/partfs/partlog"
)

// segmentTimes gives the timestamps the cleaner's choices depend on.
type segmentTimes interface {
	// LargestTimestamp is the segment's largest record timestamp, or its
	// file's mtime when it has none (Kafka's LogSegment.largestTimestamp).
	LargestTimestamp(seg partlog.Segment) int64
	// FirstBatchTimestamp is the timestamp of the segment's first batch,
	// -1 when unknown or empty.
	FirstBatchTimestamp(seg partlog.Segment) int64
}

// Cleanable is the dirty state of one log (Kafka's LogToClean).
type Cleanable struct {
	FirstDirty       int64   // first offset not yet cleaned (from the checkpoint)
	FirstUncleanable int64   // base of the first segment that may not be cleaned
	CleanBytes       int64   // bytes of segments below FirstDirty
	CleanableBytes   int64   // bytes of segments in [FirstDirty, FirstUncleanable)
	Ratio            float64 // CleanableBytes / (CleanBytes + CleanableBytes)
	CompactionDelay  int64   // ms the oldest dirty batch is past max.compaction.lag.ms, 0 if not
}

// Eligible reports whether the log needs cleaning now: its dirty ratio
// exceeds min.cleanable.dirty.ratio, or max.compaction.lag.ms has passed
// for dirty data.
func (c Cleanable) Eligible(cfg LogConfig) bool {
	if c.CleanableBytes <= 0 {
		return false
	}
	return c.CompactionDelay > 0 || c.Ratio > cfg.MinCleanableDirtyRatio
}

// cleanableRange computes the dirty state of a log from a snapshot of its
// segments (oldest first, the last one active), its cleaner checkpoint and
// its log start offset, as Kafka's LogCleanerManager.cleanableOffsets and
// calculateCleanableBytes do.
func cleanableRange(segs []partlog.Segment, checkpoint, logStart, nowMs int64, cfg LogConfig, times segmentTimes) Cleanable {
	if len(segs) == 0 {
		return Cleanable{FirstDirty: logStart, FirstUncleanable: logStart}
	}
	active := segs[len(segs)-1]
	firstDirty := checkpoint
	if firstDirty < logStart || firstDirty > active.Next {
		firstDirty = logStart // missing or invalid checkpoint: everything is dirty
	}
	uncleanable := active.Base
	dirty := dirtyNonActive(segs, firstDirty)
	if cfg.MinCompactionLagMs > 0 {
		for _, s := range dirty {
			if times.LargestTimestamp(s) > nowMs-cfg.MinCompactionLagMs {
				uncleanable = s.Base
				break
			}
		}
	}
	c := Cleanable{FirstDirty: firstDirty, FirstUncleanable: uncleanable}
	for _, s := range segs[:len(segs)-1] {
		if s.Base < firstDirty {
			c.CleanBytes += s.Size
		}
		if s.Next > firstDirty && s.Base < uncleanable {
			c.CleanableBytes += s.Size
		}
	}
	if total := c.CleanBytes + c.CleanableBytes; total > 0 {
		c.Ratio = float64(c.CleanableBytes) / float64(total)
	}
	c.CompactionDelay = compactionDelay(dirty, nowMs, cfg, times)
	return c
}

// dirtyNonActive returns the sealed segments holding offsets >= firstDirty.
func dirtyNonActive(segs []partlog.Segment, firstDirty int64) []partlog.Segment {
	sealed := segs[:len(segs)-1]
	for i, s := range sealed {
		if s.Next > firstDirty {
			return sealed[i:]
		}
	}
	return nil
}

// compactionDelay is how long ago the oldest dirty batch passed
// max.compaction.lag.ms (Kafka's maxCompactionDelay), 0 if it has not.
func compactionDelay(dirty []partlog.Segment, nowMs int64, cfg LogConfig, times segmentTimes) int64 {
	lag := max(cfg.MaxCompactionLagMs, 0)
	if nowMs-lag < 0 {
		return 0 // the default lag (Long.MAX_VALUE) never passes
	}
	earliest := int64(-1)
	for _, s := range dirty {
		if ts := times.FirstBatchTimestamp(s); ts > 0 && (earliest < 0 || ts < earliest) {
			earliest = ts
		}
	}
	if earliest < 0 {
		return 0
	}
	if until := nowMs - lag; earliest < until {
		return until - earliest
	}
	return 0
}
