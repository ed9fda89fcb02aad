package compact

import "fmt"

// Summary is what a run over several logs did.
type Summary struct {
	Stats
	Logs    int // logs looked at
	Cleaned int // logs cleaned
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

// CleanAll cleans every log in logs that needs it (with force, every
// compacted log with dirty data), one after the other, as `partfs compact`
// does. It stops at the first error.
func (c *Cleaner) CleanAll(logs []Target, force bool) (Summary, error) {
	var sum Summary
	for _, log := range logs {
		sum.Logs++
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
	return fmt.Sprintf("cleaned %d of %d partitions: read %d bytes, wrote %d bytes, removed %d of %d records",
		s.Cleaned, s.Logs, s.BytesRead, s.BytesWritten, s.RecordsRemoved, s.RecordsRead)
}
