package logstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// loadAll finds every partition directory of the data directory and opens
// them, in the background with Options.OpenInBackground.
func (st *Store) loadAll() error {
	st.stored = st.readTopicsFile()
	if err := st.stored.damaged; err != nil {
		st.logger.WithError(err).Error("stored topic configuration unreadable: no topic opened, nothing deleted, the file left as it is")
	}
	cps, err := st.readCheckpoints()
	if err != nil {
		return err
	}
	des, err := st.fs.ReadDir(st.dir)
	if err != nil {
		return fmt.Errorf("list data directory: %w", err)
	}
	parts := map[string][]int{}
	for _, fi := range des {
		t, n, ok := kafkaname.ParsePartitionDir(fi.Name())
		switch {
		case ok && fi.Type()&os.ModeSymlink != 0:
			st.logger.WithField("path", st.path(fi.Name())).
				Error("partition directory is a symbolic link: not followed, partition skipped")
		case ok && fi.IsDir():
			parts[t] = append(parts[t], n)
		}
	}
	var broker map[string]map[string]string
	var brokerErr error
	if ns, ok := parts[metadataTopic]; ok {
		delete(parts, metadataTopic)
		broker, brokerErr = st.brokerConfigs(st.loadTopic(metadataTopic, ns, nil, nil, cps))
		if brokerErr != nil {
			st.logger.WithError(brokerErr).Error("cannot read the topic configurations of the metadata log: no topic opened, nothing deleted")
		}
	}
	loads := make([]topicLoad, 0, len(parts))
	for name, ns := range parts {
		loads = append(loads, topicLoad{name, ns, broker[name], brokerErr})
	}
	_, pend := st.publishTopics(loads, cps)
	if st.opt.OpenInBackground {
		st.openInBackground(pend)
	} else {
		st.openPending(pend)
	}
	return nil
}

// topicLoad is what publishTopics is given for one topic.
type topicLoad struct {
	name      string
	ns        []int
	broker    map[string]string
	brokerErr error
}

// loadTopic publishes topic name and opens its partitions ns before it
// returns (publishTopics, openPending).
func (st *Store) loadTopic(name string, ns []int, broker map[string]string, brokerErr error, cps rootCheckpoints) *topic {
	topics, pend := st.publishTopics([]topicLoad{{name, ns, broker, brokerErr}}, cps)
	st.openPending(pend)
	return topics[0]
}

// publishTopics makes the topics given visible with every partition
// pending: opened by openPending, or by the first Log that asks for it.
// A stored setting it cannot use never changes what is kept: an unknown
// key is kept and reported; a bad value, a damaged entry or an unreadable
// file leaves the whole topic unopened (its files answer EIO). A topic's
// broker settings come from a KRaft metadata log, under its overrides;
// brokerErr says the metadata log could not be read (the topic is then
// not opened).
func (st *Store) publishTopics(loads []topicLoad, cps rootCheckpoints) ([]*topic, []*pendingLog) {
	var pend []*pendingLog
	topics := make([]*topic, len(loads))
	for i, tl := range loads {
		t, cfg, cfgErr := st.newTopic(tl)
		topics[i] = t
		for _, n := range tl.ns {
			p := &pendingLog{t: t, n: n, cfg: cfg, cfgErr: cfgErr, cp: cps.forLog(t.name, n), cps: cps}
			t.pending[n] = p
			pend = append(pend, p)
		}
	}
	st.mu.Lock()
	for _, t := range topics {
		st.topics[t.name] = t
	}
	st.mu.Unlock()
	return topics, pend
}

// newTopic makes a topic's value from what is stored (its id read from
// the first partition that has one) and returns its configuration, or the
// error that keeps its partitions unopened.
func (st *Store) newTopic(tl topicLoad) (*topic, config.Topic, error) {
	name, ns, broker := tl.name, tl.ns, tl.broker
	overrides := st.stored.overrides[name]
	if overrides == nil {
		overrides = map[string]string{}
	}
	lg := st.logger.WithField("topic", name)
	sort.Ints(ns)
	t := &topic{name: name, overrides: overrides, broker: broker, logs: make([]*Log, ns[len(ns)-1]+1), unopened: map[int]error{}, pending: map[int]*pendingLog{}}
	if len(broker) > 0 {
		lg.WithField("keys", len(broker)).Info("topic configuration from the metadata log")
	}
	cfg, unknown, cfgErr := config.ApplyStored(st.base, t.stored())
	if len(unknown) > 0 {
		lg.WithField("keys", strings.Join(unknown, ",")).
			Warn("stored topic configuration has keys partfs does not know: kept, not applied")
	}
	if cfgErr != nil {
		lg.WithError(cfgErr).Error("stored topic configuration has a bad value: topic not opened, nothing deleted")
	}
	if tl.brokerErr != nil {
		cfgErr = tl.brokerErr
	}
	if err := st.stored.unusable(name); err != nil {
		if st.stored.damaged == nil {
			lg.WithError(err).Error("stored topic configuration entry damaged: topic not opened, nothing deleted, the entry kept")
		}
		cfgErr = err
	}
	for _, n := range ns {
		if !checkpoint.UUID(t.id).IsZero() {
			break
		}
		t.id, _ = st.readTopicID(st.path(kafkaname.PartitionDir(name, n)))
	}
	return t, cfg, cfgErr
}

// newLog builds an empty Log value for dir.
func (st *Store) newLog(topic string, n int, dir string, cfg config.Topic) *Log {
	return &Log{store: st, topic: topic, partition: n, dir: dir, fs: st.fs, now: st.opt.Now,
		logger: st.logger.WithField("partition", kafkaname.PartitionDir(topic, n)), readOnly: st.opt.ReadOnly || topic == metadataTopic,
		cfg: cfg, byID: map[uint64]*segment{}, changed: make(chan struct{}), lastFlush: st.opt.Now(),
		topicGen: st.stored.gens[topic]}
}

// loadLog opens one partition: leftovers, segments, then the clean path
// (trust sizes and last index entries) or recovery from the recovery point.
func (st *Store) loadLog(topic string, n int, dir string, cfg config.Topic, cp logCheckpoints) (*Log, error) {
	l := st.newLog(topic, n, dir, cfg)
	files, err := l.resolveLeftovers()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		s, err := l.openSegment(f)
		if err != nil {
			l.close(true)
			return nil, err
		}
		s.refs.Store(1)
		l.segs = append(l.segs, s)
		l.byID[s.id] = s
	}
	if err := l.loadTxnIndexes(files); err != nil {
		l.logger.WithError(err).Warn("ignoring unreadable transaction index")
	}
	if err := l.loadSegments(cp, st.clean); err != nil {
		l.close(true)
		return nil, err
	}
	return l, nil
}

// loadSegments finishes loading after the segment files are open.
func (l *Log) loadSegments(cp logCheckpoints, clean bool) error {
	rp := cp.recoveryPoint
	if !cp.hasRecoveryPoint {
		rp = 0
	}
	side, found := l.readSegmentsSidecar()
	l.guardTopicGen(side.topicGen)
	if side.logStart >= 0 && cp.logStart > side.logStart {
		l.logger.WithField("checkpoint", cp.logStart).WithField("sidecar", side.logStart).WithField("file", kafkaname.LogStartOffsetFile).
			Warn("log start offset checkpoint above the one recorded at the last clean close: the lower is used, nothing below it deleted")
		cp.logStart = side.logStart
	}
	if len(l.segs) > 0 && clean {
		if !found {
			l.store.noSidecar.Add(1)
		}
		if err := l.loadClean(side.segs); err != nil {
			return err
		}
	} else if len(l.segs) > 0 {
		if err := l.recoverFrom(rp); err != nil {
			return err
		}
	}
	if len(l.segs) > 0 && l.endLocked() < cp.logStart {
		l.logger.WithField("log_end_offset", l.endLocked()).WithField("log_start_offset", cp.logStart).
			Warn("log end is below the log start checkpoint: deleting all segments")
		for _, s := range l.segs {
			l.removeSegmentFiles(s)
			l.retire(s)
		}
		l.segs = nil
	}
	if len(l.segs) == 0 {
		if l.readOnly {
			return l.emptyReadOnly(cp.logStart)
		}
		s, err := l.createSegment(max(cp.logStart, 0), l.now())
		if err != nil {
			return err
		}
		l.addSegment(s)
	}
	l.startOffset = max(cp.logStart, l.segs[0].base)
	l.cleanerCheckpoint = cp.cleaner
	// Recovery fsyncs what it re-validated: only a read-only store, which
	// syncs nothing, keeps the stored recovery point after an unclean open.
	l.recoveryPoint = l.endLocked()
	if !clean && l.readOnly {
		l.recoveryPoint = min(max(rp, l.startOffset), l.endLocked())
	}
	return nil
}

// openSegment opens a segment's .log (size from stat) and its indexes.
func (l *Log) openSegment(f segmentFiles) (*segment, error) {
	path := segmentPath(l.dir, f.base, kafkaname.LogSuffix) + f.suffix
	flag := os.O_RDWR
	if l.readOnly {
		flag = os.O_RDONLY
	}
	file, fi, err := vfs.OpenStat(l.fs, path, flag)
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", path, err)
	}
	ident, _ := linked(fi)
	s := &segment{dir: l.dir, base: f.base, id: l.store.nextID(), stamp: fileStamp(fi, path), ident: ident, log: file, path: path, size: fi.Size(),
		next: f.base, lastPos: -1, maxTs: -1, offMaxTs: f.base, rollTs: -1, created: l.now(), jitter: l.rollJitter(),
		records: -1, suffix: f.suffix}
	if err := l.openIndexes(s, false, false); err != nil {
		file.Close()
		return nil, err
	}
	return s, nil
}

// loadClean trusts what a clean shutdown left once it agrees with the
// segments: sizes, the last index entries and the segments sidecar, each
// entry cross-checked by its segment's last batch (checkEntry). A segment
// without a usable entry takes the next segment's base as its end, and the
// active one scans its tail after its last index entry (Kafka's clean
// load); an index failing its cheap check is rebuilt. A misnamed segment
// (errMisnamed) fails the load. REQUIRES: mu held or the log not shared.
func (l *Log) loadClean(side map[int64]sidecarSegment) error {
	for i, s := range l.segs {
		limit := int64(math.MaxInt64)
		if i+1 < len(l.segs) {
			limit = l.segs[i+1].base
		}
		if err := s.cheapIndexCheck(limit); err != nil {
			l.logger.WithError(err).Warn("index failed its check on a clean open: rebuilding")
			if err := l.recoverSegment(s, i == len(l.segs)-1); errors.Is(err, errMisnamed) {
				return err
			}
			continue
		}
		s.maxTs, s.offMaxTs = s.tidx.LastEntry()
		if e, ok := side[s.base]; ok {
			err := s.checkEntry(e, limit, i == len(l.segs)-1)
			if err == nil {
				s.next, s.records, s.maxTs, s.offMaxTs = e.Next, e.Records, e.MaxTs, e.OffMaxTs
				if err := l.indexesWithin(s, i == len(l.segs)-1); errors.Is(err, errMisnamed) {
					return err
				}
				continue
			}
			l.logger.WithError(err).WithField("segment", s.path).WithField("file", l.segmentsSidecarPath()).
				Warn("segments sidecar entry disagrees with the segment: ignored, taken from the segment")
		}
		if i+1 < len(l.segs) {
			s.next = l.segs[i+1].base
			if err := l.indexesWithin(s, false); errors.Is(err, errMisnamed) {
				return err
			}
		} else if err := l.scanTail(s); err != nil {
			l.logger.WithError(err).Warn("active segment tail unreadable on a clean open: recovering it")
			if err := l.recoverSegment(s, true); errors.Is(err, errMisnamed) {
				return err
			}
		}
	}
	return nil
}

// indexesWithin cross-checks s's indexes with its end, now known: their
// last entries (cached: nothing is read) name offsets below s.next (an
// index of another segment, or an older copy, may not; positions are
// checked when a lookup uses them); one that does not is rebuilt from the
// segment, with a log line. REQUIRES: mu
// held or the log not shared.
func (l *Log) indexesWithin(s *segment, active bool) error {
	off := s.oidx.LastOffset()
	_, toff := s.tidx.LastEntry()
	var err error
	switch {
	case s.oidx.Entries() > 0 && off >= s.next:
		err = fmt.Errorf("%s: last offset index entry names offset %d, the segment ends before %d", s.path, off, s.next)
	case s.tidx.Entries() > 0 && toff >= s.next:
		err = fmt.Errorf("%s: last time index entry names offset %d, the segment ends before %d", s.path, toff, s.next)
	default:
		return nil
	}
	l.logger.WithError(err).Warn("index disagrees with its segment on a clean open: rebuilding it")
	return l.recoverSegment(s, active)
}

// cheapIndexCheck is Kafka's sanity check on load, from the cached last
// entries only (no index is read whole): the last offset entry inside the
// segment's offsets (below limit, the next segment's base), no untrimmed
// zero entries, a plausible last time entry. Positions are checked when a
// lookup uses them (a mismatch falls back to a scan and a rebuild).
func (s *segment) cheapIndexCheck(limit int64) error {
	off := s.oidx.LastOffset()
	if s.oidx.Entries() > 0 && (off < s.base || off >= limit) {
		return fmt.Errorf("%s: last index entry offset %d outside [%d, %d)", s.path, off, s.base, limit)
	}
	if n := s.oidx.Entries(); n > 1 && off == s.base {
		return fmt.Errorf("%s: %d index entries ending in a zero entry (untrimmed index)", s.path, n)
	}
	ts, toff := s.tidx.LastEntry()
	if n := s.tidx.Entries(); n > 0 && (ts <= 0 && n > 1 || toff < s.base) {
		return fmt.Errorf("%s: time index of %d entries ends in (%d, %d)", s.path, n, ts, toff)
	}
	return nil
}

// scanTail finds the active segment's next offset by scanning from its last
// index entry (Kafka's readNextOffset).
func (l *Log) scanTail(s *segment) error {
	off, pos := s.oidx.Lookup(math.MaxInt64)
	s.next = max(s.next, off)
	if s.oidx.Entries() > 0 {
		s.next = off + 1
	}
	sc := record.NewScanner(s.log, int64(pos), s.size, s.path)
	end := int64(pos)
	order := record.NewOffsetOrder(s.base, math.MaxInt64)
	for sc.Next() {
		if err := order.Check(sc.Batch()); err != nil {
			return err
		}
		h := &sc.Batch().Header
		s.next = max(s.next, h.LastOffset()+1)
		s.lastPos = sc.Batch().Pos
		end = sc.Batch().Pos + h.Size()
	}
	if err := sc.Err(); err != nil || end != s.size {
		return errors.Join(err, fmt.Errorf("%s: valid data ends at %d of %d bytes", s.path, end, s.size))
	}
	return nil
}

// emptyReadOnly gives a read-only log with no segment an empty in-memory
// segment so that offsets still answer.
func (l *Log) emptyReadOnly(start int64) error {
	s := &segment{dir: l.dir, base: max(start, 0), id: l.store.nextID(), log: emptyFile{},
		path: segmentPath(l.dir, max(start, 0), kafkaname.LogSuffix), next: max(start, 0), lastPos: -1, maxTs: -1, rollTs: -1, created: l.now()}
	if _, _, err := l.memIndexes(s, 0); err != nil {
		return err
	}
	l.addSegment(s)
	return nil
}

// close closes every segment's files (trimming writable indexes, synced
// when sync is set; otherwise the caller syncs the filesystem).
func (l *Log) close(sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	if !l.readOnly && l.werr == nil && len(l.segs) > 0 {
		// An active segment not written since a clean open is as it
		// was: nothing to trim, release or sync.
		if a := l.active(); a.expanded || a.allocEnd > a.size {
			errs = append(errs, a.seal(), a.releaseAlloc())
			if sync {
				errs = append(errs, a.syncFiles())
			}
		}
	}
	for _, s := range l.segs {
		errs = append(errs, s.closeFiles())
	}
	if l.werr != nil {
		errs = append(errs, fmt.Errorf("%s: %w", l.dir, l.werr))
	}
	return errors.Join(errs...)
}

var errEmptyFile = fmt.Errorf("empty in-memory segment: %w", partlog.ErrNotFound)

// emptyFile is the .log of a read-only store's placeholder segment.
type emptyFile struct{}

func (emptyFile) ReadAt([]byte, int64) (int, error)  { return 0, io.EOF }
func (emptyFile) WriteAt([]byte, int64) (int, error) { return 0, errEmptyFile }
func (emptyFile) Write([]byte) (int, error)          { return 0, errEmptyFile }
func (emptyFile) Close() error                       { return nil }
func (emptyFile) Sync() error                        { return nil }
func (emptyFile) Truncate(int64) error               { return errEmptyFile }
func (emptyFile) Stat() (os.FileInfo, error)         { return memInfo{name: "empty"}, nil }
func (emptyFile) Name() string                       { return "empty" }
