package compact

import "fmt"

// Summary is what a run over several logs did.
type Summary struct {
	Stats
	Logs    int // compacted logs looked at (others are not counted)
	Cleaned int // logs cleaned
	// Skipped says, for each compacted log not cleaned, why:
	// "TOPIC-N: REASON".
	Skipped []string
}

// Estimate returns the bytes a cleaning of log would read now (its clean
// bytes once, its dirty bytes twice) if it would be cleaned, else 0.
func (c *Cleaner) Estimate(log Target, force bool) int64 {
	cl, cfg := c.Check(log)
	if !cfg.Compacted || cl.CleanableBytes <= 0 || !(force || cl.Eligible(cfg)) {
		return 0
	}
	return cl.CleanBytes + 2*cl.CleanableBytes
}

// CleanAll cleans every compacted log in logs that needs it (with force,
// every one with dirty data), one after the other, as `partfs compact`
// does; logs whose cleanup.policy has no compact are left alone and not
// counted. It stops at the first error.
func (c *Cleaner) CleanAll(logs []Target, force bool) (Summary, error) {
	var sum Summary
	for _, log := range logs {
		cl, cfg := c.Check(log)
		if !cfg.Compacted {
			continue
		}
		sum.Logs++
		if why := c.why(log, cl, cfg, force); why != "" {
			sum.Skipped = append(sum.Skipped, fmt.Sprintf("%s-%d: %s", log.Topic(), log.Partition(), why))
			continue
		}
		st, err := c.Clean(log, force)
		sum.add(st)
		if err != nil {
			return sum, err
		}
		if st.Rounds > 0 {
			sum.Cleaned++
		}
	}
	return sum, nil
}

// why says why a compacted log with dirty state cl is not cleaned now,
// "" when it is.
func (c *Cleaner) why(log Target, cl Cleanable, cfg LogConfig, force bool) string {
	if cl.CleanableBytes > 0 {
		if force || cl.Eligible(cfg) {
			return ""
		}
		return fmt.Sprintf("dirty ratio %.3f is not above min.cleanable.dirty.ratio %g (--force cleans anyway)",
			cl.Ratio, cfg.MinCleanableDirtyRatio)
	}
	segs, release := log.Segments()
	defer release()
	if len(segs) == 0 || segs[len(segs)-1].Next <= cl.FirstDirty {
		return "nothing was written since it was last cleaned"
	}
	if active := segs[len(segs)-1]; cl.FirstUncleanable < active.Base {
		return fmt.Sprintf("min.compaction.lag.ms (%d ms) holds back the dirty segments", cfg.MinCompactionLagMs)
	}
	return "only the active segment is dirty (the cleaner never cleans it; it rolls at segment.bytes or segment.ms)"
}

func (s *Summary) add(st Stats) {
	s.BytesRead += st.BytesRead
	s.BytesWritten += st.BytesWritten
	s.RecordsRead += st.RecordsRead
	s.RecordsRemoved += st.RecordsRemoved
	s.BatchesCopied += st.BatchesCopied
	s.BatchesRebuilt += st.BatchesRebuilt
	s.Segments += st.Segments
	s.Rounds += st.Rounds
	s.MapGrowths += st.MapGrowths
}

// String is the one-line summary `partfs compact` prints.
func (s Summary) String() string {
	return fmt.Sprintf("cleaned %d of %d compacted partitions: read %d bytes, wrote %d bytes, removed %d of %d records",
		s.Cleaned, s.Logs, s.BytesRead, s.BytesWritten, s.RecordsRemoved, s.RecordsRead)
}
