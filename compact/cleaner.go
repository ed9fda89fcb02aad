package compact

import (
	"fmt"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/sirupsen/logrus"
)

// Defaults of the cleaner's broker settings (Kafka's names).
const (
	DefaultDedupeBufferSize = 128 << 20 // log.cleaner.dedupe.buffer.size
	DefaultLoadFactor       = 0.9       // log.cleaner.io.buffer.load.factor
)

// Options configure a Cleaner.
type Options struct {
	Now              func() time.Time // clock (time.Now)
	Logger           *logrus.Entry    // where rounds are logged (discarded if nil)
	DedupeBufferSize int64            // offset map memory per cleaner (128 MiB)
	LoadFactor       float64          // offset map fill limit (0.9)
	Throttle         *Throttle        // shared I/O limit (nil: none)
	// Progress, if set, is called with the log bytes read as they are read.
	Progress func(n int64)

	stopped <-chan struct{} // closed when a background cleaner stops
}

func (o *Options) setDefaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		l := logrus.New()
		l.SetOutput(discard{})
		o.Logger = logrus.NewEntry(l)
	}
	if o.DedupeBufferSize <= 0 {
		o.DedupeBufferSize = DefaultDedupeBufferSize
	}
	if o.LoadFactor <= 0 {
		o.LoadFactor = DefaultLoadFactor
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Cleaner cleans logs one at a time with one offset map (Kafka's
// CleanerThread's Cleaner). It is not safe for concurrent use; run one per
// cleaner thread.
type Cleaner struct {
	opt     Options
	offsets *OffsetMap // allocated at the first cleaning
	filter  filter

	hashes      []keyHash // one batch's keys while building the map
	hashOffsets []int64
}

// NewCleaner returns a cleaner; its offset map is allocated when it first
// cleans.
func NewCleaner(opt Options) *Cleaner {
	opt.setDefaults()
	return &Cleaner{opt: opt}
}

// Check returns the dirty state of log now.
func (c *Cleaner) Check(log Target) (Cleanable, LogConfig) {
	segs, release := log.Segments()
	defer release()
	cfg := LogConfigOf(log.Config())
	cl := cleanableRange(segs, log.CleanerCheckpoint(), log.StartOffset(), c.opt.Now().UnixMilli(), cfg, targetTimes{log})
	return cl, cfg
}

// Clean cleans log's dirty range if the log is compacted and eligible (or,
// with force, whenever it has cleanable bytes), in as many rounds as the
// offset map needs. It returns what it did; a zero Stats means nothing.
func (c *Cleaner) Clean(log Target, force bool) (Stats, error) {
	var st Stats
	cl, cfg := c.Check(log)
	if !cfg.Compacted || cl.CleanableBytes <= 0 || !(force || cl.Eligible(cfg)) {
		return st, nil
	}
	if err := c.ensureMap(); err != nil {
		return st, err
	}
	start := time.Now()
	for first := cl.FirstDirty; first < cl.FirstUncleanable; {
		end, err := c.round(log, first, cl.FirstUncleanable, cfg, &st)
		if err != nil {
			return st, fmt.Errorf("clean %s-%d [%d, %d): %w", log.Topic(), log.Partition(), first, cl.FirstUncleanable, err)
		}
		first = end
	}
	c.opt.Logger.WithFields(logrus.Fields{
		"topic": log.Topic(), "partition": log.Partition(), "rounds": st.Rounds,
		"read": st.BytesRead, "written": st.BytesWritten, "removed": st.RecordsRemoved,
		"ratio": fmt.Sprintf("%.3f", cl.Ratio), "took": time.Since(start).Round(time.Millisecond),
	}).Info("cleaned log")
	return st, nil
}

func (c *Cleaner) ensureMap() error {
	if c.offsets != nil {
		return nil
	}
	m, err := NewOffsetMap(c.opt.DedupeBufferSize, c.opt.LoadFactor)
	if err != nil {
		return err
	}
	c.offsets = m
	return nil
}

// round builds the offset map from first on (until stop or the map is
// full), cleans every segment below the map's end, advances the cleaner
// checkpoint and returns the end.
func (c *Cleaner) round(log Target, first, stop int64, cfg LogConfig, st *Stats) (int64, error) {
	segs, release := log.Segments()
	defer release()
	c.offsets.Clear()
	end, err := c.buildMap(log, segs, first, stop, st)
	if err != nil {
		return 0, err
	}
	if end <= first {
		return 0, fmt.Errorf("offset map of %d slots took no key at offset %d", c.offsets.Capacity(), first)
	}
	now := c.opt.Now().UnixMilli()
	if c.filter.producers, err = c.scanProducers(log, segs); err != nil {
		return 0, err
	}
	c.filter.rule = retainRule{offsets: c.offsets, nowMs: now}
	c.filter.roundEnd = stop
	c.filter.txns = newTxnState()
	c.filter.deleteRetentionMs = cfg.DeleteRetentionMs
	c.filter.stats = st
	legacyHorizon := legacyDeleteHorizon(log, segs, first, cfg)
	for _, group := range groupSegmentsBySize(segmentsBelow(segs, end), cfg, stop) {
		if err := c.cleanGroup(log, group, legacyHorizon, st); err != nil {
			return 0, err
		}
	}
	if err := log.SetCleanerCheckpoint(end); err != nil {
		return 0, fmt.Errorf("set cleaner checkpoint %d: %w", end, err)
	}
	st.Rounds++
	return end, nil
}

// segmentsBelow returns the sealed segments whose base is below end.
func segmentsBelow(segs []partlog.Segment, end int64) []partlog.Segment {
	n := 0
	for n < len(segs)-1 && segs[n].Base < end {
		n++
	}
	return segs[:n]
}

// legacyDeleteHorizon is Kafka's horizon for V0/V1 tombstones: the mtime of
// the last clean segment minus delete.retention.ms (0 when none is clean).
func legacyDeleteHorizon(log Target, segs []partlog.Segment, firstDirty int64, cfg LogConfig) int64 {
	last := -1
	for i := range segs[:len(segs)-1] {
		if segs[i].Base < firstDirty {
			last = i
		}
	}
	if last < 0 {
		return 0
	}
	return log.SegmentModTime(segs[last]).UnixMilli() - cfg.DeleteRetentionMs
}

// targetTimes serves segment timestamps from a Target.
type targetTimes struct{ log Target }

func (t targetTimes) LargestTimestamp(seg partlog.Segment) int64 {
	if seg.MaxTimestamp >= 0 {
		return seg.MaxTimestamp
	}
	return t.log.SegmentModTime(seg).UnixMilli()
}

func (t targetTimes) FirstBatchTimestamp(seg partlog.Segment) int64 {
	ts, err := firstBatchTimestamp(t.log, seg)
	if err != nil {
		return -1
	}
	return ts
}
