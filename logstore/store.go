package logstore

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// Store is a data directory: one directory per partition, Kafka's
// checkpoint files at the root. It implements partlog.Store.
type Store struct {
	dir    string
	opt    Options
	fs     vfs.FS
	logger *logrus.Entry
	base   config.Topic // Kafka defaults + the mount's --config defaults
	lock   io.Closer
	all    vfs.SyncAll // the data directory's filesystem, opened with the lock
	ids    atomic.Uint64
	clean  bool // the clean-shutdown marker was present at open
	// partitions opened clean without a segments sidecar (logged once)
	noSidecar atomic.Int64

	mu sync.Mutex
	// guarded by mu
	topics map[string]*topic
	stored *storedTopics // partfs-topics.json as read, and as rewritten
	closed bool

	stop     chan struct{}
	wg       sync.WaitGroup
	flushReq chan *Log         // logs that rolled: flush their sealed segments soon
	cpMu     sync.Mutex        // serializes checkpoint writes (they share temp file names)
	cpSaved  map[string][]byte // root checkpoint files as last written; guarded by cpMu
	// checkpoint entries of partitions not opened, written back unchanged;
	// guarded by mu
	kept map[checkpoint.TopicPartition]logCheckpoints
	// closed once every partition found at Open is opened (nil: they were
	// opened before Open returned)
	opened      chan struct{}
	skipPending atomic.Bool // set by Close: partitions still pending stay unopened
}

// topic is one topic's partitions and configuration overrides.
type topic struct {
	name      string
	id        [16]byte
	overrides map[string]string   // set through the mount (partfs-topics.json)
	broker    map[string]string   // from a KRaft broker's metadata log; overrides win
	logs      []*Log              // index = partition; nil for a missing or unopened partition
	unopened  map[int]error       // partitions found but not opened, and why (wraps ErrCorrupt)
	pending   map[int]*pendingLog // partitions found and not opened yet
}

var _ partlog.Store = (*Store)(nil)

// Open opens (creating if needed) the data directory dir: it takes .lock,
// removes .kafka_cleanshutdown, and loads (or recovers) every partition.
func Open(dir string, opt Options) (*Store, error) {
	opt.setDefaults(dir)
	st := &Store{dir: dir, opt: opt, fs: opt.FS, topics: map[string]*topic{}, stop: make(chan struct{}), cpSaved: map[string][]byte{},
		flushReq: make(chan *Log, 64),
		logger:   opt.Logger.WithField("datadir", dir)}
	base, err := config.Apply(config.Defaults(), opt.Defaults)
	if err != nil {
		return nil, fmt.Errorf("mount config defaults: %w", err)
	}
	st.base = base
	if err := st.prepareDir(); err != nil {
		st.unlock()
		return nil, err
	}
	if err := st.loadAll(); err != nil {
		st.closeLogs()
		st.unlock()
		return nil, err
	}
	if st.opened == nil {
		st.reportNoSidecar()
	}
	if !opt.ReadOnly && !opt.NoBackground {
		st.startBackground()
	}
	return st, nil
}

// reportNoSidecar logs how many partitions opened clean without a
// segments sidecar.
func (st *Store) reportNoSidecar() {
	if n := st.noSidecar.Load(); n > 0 {
		st.logger.WithField("partitions", n).Info("clean open without partfs's segments sidecar (a broker's directory, or the sidecar removed): ends taken from the segments and indexes, records counted when first asked")
	}
}

// prepareDir creates the directory, takes the lock, notes and removes the
// clean-shutdown marker and writes meta.properties when missing.
func (st *Store) prepareDir() error {
	marker := st.path(kafkaname.CleanShutdownFile)
	_, err := st.fs.Stat(marker)
	st.clean = err == nil
	if st.opt.ReadOnly {
		if _, err := st.fs.Stat(st.dir); err != nil {
			return fmt.Errorf("open data directory: %w", err)
		}
		return st.lockReadOnly()
	}
	if err := st.fs.MkdirAll(st.dir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if err := st.fs.SyncDir(filepath.Dir(filepath.Clean(st.dir))); err != nil {
		return fmt.Errorf("fsync parent of %s: %w", st.dir, err)
	}
	lock, err := st.fs.Lock(st.path(kafkaname.LockFile))
	if err != nil {
		return lockError(st.dir, err)
	}
	st.lock = lock
	if st.all, err = st.fs.OpenSyncAll(st.dir); err != nil {
		return fmt.Errorf("open %s: %w", st.dir, err)
	}
	if st.clean {
		if err := st.fs.Remove(marker); err != nil {
			return fmt.Errorf("remove %s: %w", marker, err)
		}
		if err := st.fs.SyncDir(st.dir); err != nil {
			return fmt.Errorf("fsync %s: %w", st.dir, err)
		}
	}
	return st.ensureMetaProperties()
}

// lockReadOnly takes an existing .lock (a read-only open creates nothing):
// a directory in use by a writer still refuses a second mount.
func (st *Store) lockReadOnly() error {
	if _, err := st.fs.Stat(st.path(kafkaname.LockFile)); err != nil {
		return nil
	}
	lock, err := st.fs.Lock(st.path(kafkaname.LockFile))
	if errors.Is(err, vfs.ErrLocked) {
		return lockError(st.dir, err)
	}
	if err != nil {
		st.logger.WithError(err).Warn("read-only open without the data directory lock")
		return nil
	}
	st.lock = lock
	return nil
}

func lockError(dir string, err error) error {
	if errors.Is(err, vfs.ErrLocked) {
		return fmt.Errorf("%w (a partfs mount or a Kafka broker is using it)", err)
	}
	return fmt.Errorf("lock data directory %s: %w", dir, err)
}

func (st *Store) path(name string) string { return filepath.Join(st.dir, name) }

func (st *Store) nextID() uint64 { return st.ids.Add(1) }

func (st *Store) unlock() {
	if st.all != nil {
		st.all.Close()
		st.all = nil
	}
	if st.lock != nil {
		st.lock.Close()
		st.lock = nil
	}
}

// ReadOnly reports whether the store was opened read-only.
func (st *Store) ReadOnly() bool { return st.opt.ReadOnly }

// Dir returns the data directory.
func (st *Store) Dir() string { return st.dir }

// Topics returns the topic names, sorted.
func (st *Store) Topics() ([]string, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Sorted(maps.Keys(st.topics)), nil
}

// Partitions returns the partition count of topic.
func (st *Store) Partitions(name string) (int, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	t, err := st.topicLocked(name)
	if err != nil {
		return 0, err
	}
	return len(t.logs), nil
}

// PartitionNumbers returns the partitions of topic found in the data
// directory, opened or not (partlog.PartitionLister).
func (st *Store) PartitionNumbers(name string) ([]int, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	t, err := st.topicLocked(name)
	if err != nil {
		return nil, err
	}
	var out []int
	for n, l := range t.logs {
		if l != nil || t.unopened[n] != nil || t.pending[n] != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

var _ partlog.PartitionLister = (*Store)(nil)

// Partition returns partition n of topic.
func (st *Store) Partition(name string, n int) (partlog.Log, error) {
	l, err := st.Log(name, n)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// topicLocked returns the topic named name, or an error wrapping
// partlog.ErrNotFound. REQUIRES: st.mu held.
func (st *Store) topicLocked(name string) (*topic, error) {
	return partlog.LookupTopic(st.topics, name)
}

// Log returns partition n of topic as its concrete type, opening it
// first if it is still pending.
func (st *Store) Log(name string, n int) (*Log, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	t, err := st.topicLocked(name)
	if err != nil {
		return nil, err
	}
	if p := t.pending[n]; p != nil {
		st.mu.Unlock()
		st.openLog(p)
		st.mu.Lock()
	}
	if err := t.unopened[n]; err != nil {
		return nil, err
	}
	if n < 0 || n >= len(t.logs) || t.logs[n] == nil {
		return nil, fmt.Errorf("partition %d of topic %q: %w", n, name, partlog.ErrNotFound)
	}
	return t.logs[n], nil
}

// Logs returns every partition, by topic and partition number, once none
// is pending.
func (st *Store) Logs() []*Log {
	st.WaitOpened()
	return st.openedLogs()
}

// openedLogs returns the partitions opened so far, by topic and partition
// number.
func (st *Store) openedLogs() []*Log {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*Log
	names := make([]string, 0, len(st.topics))
	for n := range st.topics {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, l := range st.topics[n].logs {
			if l != nil {
				out = append(out, l)
			}
		}
	}
	return out
}

// Close stops background work, flushes every partition, writes the
// checkpoints, closes the segments (trimming active indexes) and writes the
// clean-shutdown marker, then releases the lock.
func (st *Store) Close() error {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil
	}
	st.closed = true
	st.mu.Unlock()
	st.skipPendingAtClose()
	close(st.stop)
	st.wg.Wait()
	if st.opt.ReadOnly {
		st.closeLogs()
		return nil
	}
	logs := st.Logs()
	var errs []error
	if st.unsynced(logs) >= syncAllFrom {
		errs = st.closeSyncingAll(logs)
	} else {
		errs = eachPartition(len(logs), st.opt.Progress, "syncing partitions", func(i int) error { return logs[i].Sync() })
		errs = append(errs, st.writeCheckpoints())
		errs = append(errs, eachPartition(len(logs), st.opt.Progress, "closing partitions", func(i int) error {
			return errors.Join(logs[i].writeSegmentsSidecar(true), logs[i].close(true))
		})...)
	}
	err := errors.Join(errs...)
	if err == nil {
		err = checkpoint.WriteCleanShutdown(st.fs, st.path(kafkaname.CleanShutdownFile))
	}
	st.unlock()
	return err
}

// syncAllFrom is how many partitions with something to sync make a close
// sync the whole filesystem once instead of each partition's files.
var syncAllFrom = 64

// unsynced counts the partitions that have something to sync at close.
func (st *Store) unsynced(logs []*Log) int {
	n := 0
	for _, l := range logs {
		if l.needsSync() {
			n++
		}
	}
	return n
}

// closeSyncingAll closes the partitions without a sync each (their records,
// trimmed indexes and sidecars written), makes all of it durable with one
// sync of the data directory's filesystem, then advances the recovery
// points and writes the checkpoints that name them.
func (st *Store) closeSyncingAll(logs []*Log) []error {
	ends := make([]int64, len(logs))
	errs := eachPartition(len(logs), st.opt.Progress, "closing partitions", func(i int) error {
		ends[i] = logs[i].endToSync()
		return errors.Join(logs[i].writeSegmentsSidecar(false), logs[i].close(false))
	})
	if err := st.syncFilesystem(logs, ends); err != nil {
		st.logger.WithError(err).Error("sync of the data directory's filesystem failed: no clean shutdown recorded, the next mount recovers every partition")
		return append(errs, err)
	}
	return append(errs, st.writeCheckpoints())
}

// SyncAll makes every record appended so far and every sidecar written
// durable with one sync of the data directory's filesystem, and advances
// the recovery points to what it made durable (partlog.BulkSyncer). A
// partition still pending has nothing to sync.
func (st *Store) SyncAll() error {
	if st.opt.ReadOnly {
		return nil
	}
	logs := st.openedLogs()
	ends := make([]int64, len(logs))
	for i, l := range logs {
		ends[i] = l.endToSync()
	}
	return st.syncFilesystem(logs, ends)
}

// syncFilesystem makes everything written durable with one sync of the
// data directory's filesystem, then advances each log's recovery point to
// ends[i], its endToSync taken before the sync.
func (st *Store) syncFilesystem(logs []*Log, ends []int64) error {
	if err := st.all.Sync(); err != nil {
		return fmt.Errorf("sync the filesystem of %s: %w", st.dir, err)
	}
	for i, l := range logs {
		l.synced(ends[i])
	}
	return nil
}

var (
	_ partlog.BulkSyncer    = (*Store)(nil)
	_ partlog.SidecarWriter = (*Log)(nil)
)

// closeLogs closes every partition's segments.
func (st *Store) closeLogs() error {
	logs := st.Logs()
	return errors.Join(eachPartition(len(logs), st.opt.Progress, "closing partitions", func(i int) error { return logs[i].close(true) })...)
}

// stored returns the topic's stored settings (storedWith its overrides).
func (t *topic) stored() map[string]string { return t.storedWith(t.overrides) }

// storedWith returns the settings of the topic with the mount's overrides
// over: Kafka's own for its internal topics (which a broker of the
// ZooKeeper era keeps in ZooKeeper, not in the data directory), the
// broker's from a KRaft metadata log over them, then overrides.
func (t *topic) storedWith(overrides map[string]string) map[string]string {
	return withOverrides(withOverrides(internaltopic.Settings(t.name), t.broker), overrides)
}

// withOverrides returns base with over's keys set over it.
func withOverrides(base, over map[string]string) map[string]string {
	if len(base) == 0 {
		return over
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
