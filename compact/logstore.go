package compact

import (
	"fmt"

	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
)

// storeLog adapts a *logstore.Log to Target.
type storeLog struct{ *logstore.Log }

func (s storeLog) NewCleaned(base int64) (Cleaned, error) {
	c, err := s.Log.NewCleanedSegment(base)
	if err != nil {
		return nil, err
	}
	return storeCleaned{c}, nil
}

func (s storeLog) Replace(cleaned []Cleaned, old []partlog.Segment) error {
	cs := make([]*logstore.CleanedSegment, len(cleaned))
	for i, c := range cleaned {
		lc, ok := c.(storeCleaned)
		if !ok {
			return fmt.Errorf("compact: cleaned segment of type %T is not logstore's", c)
		}
		cs[i] = lc.CleanedSegment
	}
	return s.Log.ReplaceSegments(cs, old)
}

func (s storeLog) AbortedTxns(from, to int64) []AbortedTxn {
	var out []AbortedTxn
	for _, t := range s.Log.AbortedTxns(from, to) {
		out = append(out, AbortedTxn{t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset})
	}
	return out
}

// storeCleaned adapts a *logstore.CleanedSegment to Cleaned.
type storeCleaned struct{ *logstore.CleanedSegment }

func (c storeCleaned) AddAbortedTxn(t AbortedTxn) {
	c.CleanedSegment.AddAbortedTxn(logstore.AbortedTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset,
		LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset})
}

// Targets returns the partitions of store as cleaner targets, optionally
// only those of the given topics.
func Targets(store *logstore.Store, topics ...string) []Target {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var out []Target
	for _, l := range store.Logs() {
		if len(want) == 0 || want[l.Topic()] {
			out = append(out, storeLog{l})
		}
	}
	return out
}

// Start runs the background cleaner of a mount over every partition of
// store (including ones created later), from its first pass after every
// partition is open: stop never waits for partitions still opening. Call
// stop before closing store.
func Start(store *logstore.Store, opt BackgroundOptions) (stop func()) {
	return StartLogs(func() []Target {
		if !store.Opened() {
			return nil
		}
		return Targets(store)
	}, opt)
}
