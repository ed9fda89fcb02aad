package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// TileOffsets is the number of offsets one tile (segment) spans.
const TileOffsets = 4096

// SlotBytesPerOffset spaces the tiles' slots: tile k starts at most
// k*TileOffsets*SlotBytesPerOffset bytes into a rendering (16 MiB per
// tile). Records rendering to more than this on average (4 KiB) let a
// tile's rendering run into the next tile's slot when both were
// placed before either was read.
const SlotBytesPerOffset = 4096

// offsetsMaxAge is how long the log start and end offsets are used before
// they are asked again (a `tail -f` polls fstat once a second).
const offsetsMaxAge = 50 * time.Millisecond

// Log is one partition of a topic on the cluster. The Logs that
// WithContext returns share its state.
type Log struct {
	*logState
	// ctx and deadline bound every call made through this Log (one
	// request of the filesystem, WithContext); nil and zero: each call
	// has Options.Timeout
	ctx      context.Context
	deadline time.Time
}

// logState is a partition's state, shared by the Logs of its requests.
type logState struct {
	s     *Store
	topic string
	part  int32

	mu      sync.Mutex
	start   int64               // REQUIRES: mu held; log start offset as of at
	end     int64               // REQUIRES: mu held; last stable offset (read_committed end) as of at
	at      time.Time           // REQUIRES: mu held; zero: ask again
	told    bool                // REQUIRES: mu held; the cluster answered an ask once
	changed chan struct{}       // REQUIRES: mu held
	gens    map[int64]int64     // REQUIRES: mu held; tile base -> times an append to it did not land as one run
	counts  map[int64]tileCount // REQUIRES: mu held; tile base -> records counted (count.go)
	marks   map[int64][]mark    // REQUIRES: mu held; tile base -> prints of its prefixes (prints.go)
	heads   map[int64][]head    // REQUIRES: mu held; tile base -> its batches' headers as a read from its first offset met them (prints.go)
	printLo map[int64]int64     // REQUIRES: mu held; tile base -> the first offset its marks were made from
	// epoch is the largest leader epoch of the batches printed, epochEnd
	// the offset after the last of them (printcache.go)
	epoch       int32             // REQUIRES: mu held
	epochEnd    int64             // REQUIRES: mu held
	printsDirty bool              // REQUIRES: mu held; the prints changed since they were saved
	seqLo       int64             // REQUIRES: mu held; the offsets the last Read's last fetch covered
	seqHi       int64             // REQUIRES: mu held
	seqSize     int32             // REQUIRES: mu held; the fetch size it had reached
	gen         int64             // REQUIRES: mu held; counts changes of gens
	snap        []partlog.Segment // REQUIRES: mu held; the last snapshot, never modified
	snapKey     snapKey           // REQUIRES: mu held; what it was made of

	printsOnce sync.Once // the prints of an earlier mount are looked for once (printcache.go)

	w appender // one writer at a time (produce.go)
}

var (
	_ partlog.Log            = (*Log)(nil)
	_ partlog.RewritesUnseen = (*Log)(nil)
	_ partlog.Refresher      = (*Log)(nil)
	_ partlog.Bounded        = (*Log)(nil)
)

func newLog(s *Store, topic string, n int32) *Log {
	return &Log{logState: &logState{s: s, topic: topic, part: n, changed: make(chan struct{}), gens: map[int64]int64{}, counts: map[int64]tileCount{}, marks: map[int64][]mark{}, heads: map[int64][]head{}, printLo: map[int64]int64{}, epoch: -1}}
}

// WithContext returns this partition with every call made through it
// bounded by ctx and by one deadline, Options.Timeout from now: all the
// calls of one request of the filesystem share it (partlog.Bounded).
func (l *Log) WithContext(ctx context.Context) partlog.Log {
	return &Log{logState: l.logState, ctx: ctx, deadline: time.Now().Add(l.s.opt.Timeout)}
}

// call is Store.call bounded by the Log's request, if any.
func (l *Log) call(w where, op string, fn func(ctx context.Context) error) error {
	return l.s.callIn(l.ctx, l.deadline, w, op, fn)
}

// Topic returns the topic name.
func (l *Log) Topic() string { return l.topic }

// Partition returns the partition number.
func (l *Log) Partition() int { return int(l.part) }

func (l *Log) where(broker string) where {
	if broker == "" {
		broker = l.s.seeds()
	}
	return where{broker: broker, topic: l.topic, partition: l.part}
}

// StartOffset returns the log start offset.
func (l *Log) StartOffset() int64 {
	start, _ := l.offsets()
	return start
}

// EndOffset returns the log end offset a read_committed reader sees.
func (l *Log) EndOffset() int64 {
	_, end := l.offsets()
	return end
}

// offsets returns the start and end offsets, asking the cluster when
// those known are older than offsetsMaxAge. When the cluster does not
// answer, the last known ones stand (the failure is logged; reads fail
// with it).
func (l *Log) offsets() (int64, int64) {
	l.mu.Lock()
	fresh := time.Since(l.at) < offsetsMaxAge
	start, end := l.start, l.end
	l.mu.Unlock()
	if fresh {
		return start, end
	}
	start, end, err := l.ask()
	if err != nil {
		l.s.opt.Logger.WithError(err).Debug("offsets not refreshed")
	}
	return start, end
}

// Refresh asks the cluster for the log start and end offsets now, so
// that what follows sees every append acknowledged before the call
// (partlog.Refresher).
func (l *Log) Refresh() error {
	_, _, err := l.ask()
	return err
}

// ask asks the cluster for the log start and end offsets; when it does
// not answer, the last known ones stand, with the error.
func (l *Log) ask() (int64, int64, error) {
	var ns, ne int64
	err := l.call(l.where(""), "list offsets", func(ctx context.Context) error {
		var err error
		if ns, _, err = l.listOffset(ctx, partlog.Earliest); err == nil {
			ne, _, err = l.listOffset(ctx, partlog.Latest)
		}
		return err
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		return l.start, l.end, err
	}
	if ns != l.start || ne != l.end {
		l.announce()
	}
	l.start, l.end, l.at, l.told = ns, max(ne, ns), time.Now(), true
	return l.start, l.end, nil
}

// stale makes the next offsets call ask the cluster.
func (l *Log) stale() {
	l.mu.Lock()
	l.at = time.Time{}
	l.mu.Unlock()
}

// listOffset sends ListOffsets (read_committed) for ts: Earliest, Latest,
// MaxTimestamp or epoch ms. It returns the offset (-1 when no record
// qualifies) and its timestamp.
func (l *Log) listOffset(ctx context.Context, ts int64) (int64, int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.IsolationLevel = 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = l.topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = l.part
	rp.CurrentLeaderEpoch = -1
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p, err := retryPartition(ctx, "list offsets", func() ([]kmsg.ListOffsetsResponseTopicPartition, error) {
		resp, err := req.RequestWith(ctx, l.s.cl)
		if err != nil || len(resp.Topics) != 1 {
			return nil, err
		}
		return resp.Topics[0].Partitions, nil
	}, func(p *kmsg.ListOffsetsResponseTopicPartition) int16 { return p.ErrorCode })
	if err != nil {
		return 0, 0, err
	}
	return p.Offset, p.Timestamp, nil
}

// retryPartition sends a request about one partition until the answer
// carries no retriable error, and returns the partition's answer. ask
// sends it and returns the partitions of the answer's one topic (none when
// it holds no topic); code is a partition's error code; what names the
// request in errors.
func retryPartition[P any](ctx context.Context, what string, ask func() ([]P, error), code func(*P) int16) (*P, error) {
	for try := 0; ; try++ {
		parts, err := ask()
		if err != nil {
			return nil, err
		}
		if len(parts) != 1 {
			return nil, errors.New(what + ": answer without the partition")
		}
		err = kerr.ErrorForCode(code(&parts[0]))
		if err == nil {
			return &parts[0], nil
		}
		if !retriable(err) {
			return nil, err
		}
		if err := pause(ctx, try); err != nil {
			return nil, err
		}
	}
}

// OffsetForTime resolves ts with the cluster's ListOffsets; no record
// qualifying gives the log end offset.
func (l *Log) OffsetForTime(ts int64) (int64, error) {
	if ts < partlog.MaxTimestamp {
		return 0, fmt.Errorf("timestamp %d: %w", ts, partlog.ErrInvalid)
	}
	var off int64
	err := l.call(l.where(""), "list offsets", func(ctx context.Context) error {
		var err error
		off, _, err = l.listOffset(ctx, ts)
		return err
	})
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return l.EndOffset(), nil
	}
	return off, nil
}

// UnseenRewrites is true: the cluster compacts and deletes records while
// nothing is mounted, and a tile's Size counts offsets, so fs renders a
// tile again after a remount (partlog.RewritesUnseen).
func (l *Log) UnseenRewrites() bool { return true }

// Sync does nothing: an append returns once the cluster acknowledged it
// (acks=all).
func (l *Log) Sync() error { return nil }

// Changed returns a channel closed when the offsets are seen to change.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// Segments returns the tiles from the log start offset's to the log
// end offset's, as the package doc describes.
func (l *Log) Segments() ([]partlog.Segment, func()) {
	start, end := l.offsets()
	l.mu.Lock()
	told := l.told
	l.mu.Unlock()
	if told { // offsets never told (an interrupted first look) confirm no prints
		l.loadPrints(start, end)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := (snapKey{start, end, l.gen}); k == l.snapKey && l.snap != nil {
		return l.snap, func() {} // unchanged: the same (read-only) snapshot
	}
	first := start / TileOffsets * TileOffsets
	var out []partlog.Segment
	for base := first; base == first || base < end; base += TileOffsets {
		next := min(base+TileOffsets, max(end, base))
		lo := max(base, min(start, next))
		id := tileID(base, lo, l.gens[base])
		var stamp uint64
		if from, ok := l.printLo[base]; ok && from == lo {
			stamp = id // printed from lo: a Read checks the content (partlog.RewritesUnseen)
		}
		out = append(out, partlog.Segment{
			Base: base, Next: next, Size: next - lo, MaxTimestamp: -1,
			ID: id, Stamp: stamp, Slot: slot(base),
		})
	}
	l.snap, l.snapKey = out, snapKey{start, end, l.gen}
	return out, func() {}
}

// snapKey is what a snapshot of the tiles depends on.
type snapKey struct{ start, end, gen int64 }

// slot is where tile base is placed when its predecessor has not been
// rendered (0 where the product does not fit).
func slot(base int64) int64 {
	if base > (1<<62)/SlotBytesPerOffset {
		return 0
	}
	return base * SlotBytesPerOffset
}

// tileID identifies a tile's content: its base, where its records
// begin (retention moves that) and its generation. Never 0.
func tileID(base, lo, gen int64) uint64 {
	h := fnv.New64a()
	var b [24]byte
	for i, v := range []int64{base, lo, gen} {
		for j := 0; j < 8; j++ {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	h.Write(b[:])
	return h.Sum64() | 1
}

// bump gives the tiles of offsets [from, to) new IDs: what was rendered
// of them may not describe them any more.
func (l *Log) bump(from, to int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for base := from / TileOffsets * TileOffsets; base < to; base += TileOffsets {
		l.gens[base]++
	}
	l.gen++
	l.printsDirty = true
}

// Stats is what `stat` shows: the cluster's offsets, size on disk
// (DescribeLogDirs, the largest replica), configs, and the records a
// reader sees, counted tile by tile (count; an upper bound until
// every tile is counted).
func (l *Log) Stats() partlog.Stats {
	segs, _ := l.Segments()
	start, end := l.offsets()
	st := partlog.Stats{LogStartOffset: start, LogEndOffset: end, Segments: -1,
		FirstTimestampMs: -1, MaxTimestampMs: -1, RecoveryPoint: end, CleanerCheckpoint: -1, SizeBytes: l.size()}
	var exact bool
	st.Records, exact = l.count(segs)
	st.RecordsBound = !exact
	if len(segs) > 0 {
		_ = l.Read(segs[0], start, func(r *record.Record) bool {
			st.FirstTimestampMs = r.Timestamp
			return false
		})
	}
	_ = l.call(l.where(""), "list offsets", func(ctx context.Context) error {
		_, ts, err := l.listOffset(ctx, partlog.MaxTimestamp)
		if err == nil {
			st.MaxTimestampMs = ts
		}
		return err
	})
	if kvs, err := l.s.TopicConfig(l.topic); err == nil {
		for _, kv := range kvs {
			switch kv.Key {
			case "cleanup.policy":
				st.CleanupPolicy = kv.Value
			case "compression.type":
				st.CompressionType = kv.Value
			}
		}
	}
	return st
}

// size is the partition's size on disk as DescribeLogDirs reports it, -1
// if unknown.
func (l *Log) size() int64 {
	size := int64(-1)
	_ = l.call(l.where(""), "describe log dirs", func(ctx context.Context) error {
		set := kadm.TopicsSet{}
		set.Add(l.topic, l.part)
		dirs, err := l.s.adm.DescribeAllLogDirs(ctx, set)
		if err != nil {
			return err
		}
		dirs.Each(func(d kadm.DescribedLogDir) {
			d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
				if p.Topic == l.topic && p.Partition == l.part {
					size = max(size, p.Size)
				}
			})
		})
		return nil
	})
	return size
}
