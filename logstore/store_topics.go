package logstore

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
)

// topicConfig is the effective configuration of overrides on the store's
// base; stored keys partfs does not know are kept but not applied.
func (st *Store) topicConfig(overrides map[string]string) (config.Topic, error) {
	cfg, _, err := config.ApplyStored(st.base, overrides)
	return cfg, err
}

// CreateTopic creates topic with partition 0.
func (st *Store) CreateTopic(name string) error {
	if st.opt.ReadOnly {
		return fmt.Errorf("create topic %q: %w", name, partlog.ErrReadOnly)
	}
	if err := partlog.CheckTopic(name); err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.topics[name]; ok {
		return fmt.Errorf("topic %q: %w", name, partlog.ErrExists)
	}
	if err := partlog.CheckNewTopic(name, slices.Collect(maps.Keys(st.topics))); err != nil {
		return err
	}
	if name == metadataTopic {
		return fmt.Errorf("topic %q is the metadata log a KRaft broker writes: %w", name, partlog.ErrReadOnly)
	}
	if err := st.stored.unusable(name); err != nil {
		return fmt.Errorf("create topic %q: %w", name, err)
	}
	overrides := st.stored.overrides[name] // an entry kept from before applies again
	if overrides == nil {
		overrides = map[string]string{}
	}
	t := &topic{name: name, overrides: overrides}
	if _, err := rand.Read(t.id[:]); err != nil {
		return err
	}
	if err := st.addPartition(t, 0); err != nil {
		return err
	}
	st.topics[name] = t
	return nil
}

// AddPartition adds partition n, which must equal the partition count.
func (st *Store) AddPartition(name string, n int) error {
	if st.opt.ReadOnly {
		return fmt.Errorf("add partition to %q: %w", name, partlog.ErrReadOnly)
	}
	if name == metadataTopic {
		return fmt.Errorf("topic %q is the metadata log a KRaft broker writes: %w", name, partlog.ErrReadOnly)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	t, err := st.topicLocked(name)
	if err != nil {
		return err
	}
	return st.addPartition(t, n)
}

// addPartition adds partition n to t, if it is the next one (AddPartition's
// rule): it makes the directory with partition.metadata and
// leader-epoch-checkpoint and an empty segment at 0; on any failure the
// directory is removed again, so a retry starts afresh. A topic without an
// id (its partitions predate Kafka 2.8) is given one. REQUIRES: st.mu held.
func (st *Store) addPartition(t *topic, n int) error {
	if err := partlog.CheckNextPartition(t.name, n, len(t.logs)); err != nil {
		return err
	}
	dir := st.path(kafkaname.PartitionDir(t.name, n))
	if _, err := st.fs.Stat(dir); err == nil {
		return fmt.Errorf("partition directory %s: %w", dir, partlog.ErrExists)
	}
	if checkpoint.UUID(t.id).IsZero() {
		if _, err := rand.Read(t.id[:]); err != nil {
			return err
		}
	}
	if err := st.fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	l, err := st.fillPartition(t, n, dir)
	if err != nil {
		if rerr := st.fs.RemoveAll(dir); rerr != nil {
			st.logger.WithError(rerr).WithField("path", dir).Error("cannot remove the partition directory of a failed creation")
		}
		return err
	}
	t.logs = append(t.logs, l)
	return nil
}

// fillPartition writes a new partition directory's files and opens it.
func (st *Store) fillPartition(t *topic, n int, dir string) (*Log, error) {
	if err := checkpoint.WritePartitionMetadata(st.fs, filepath.Join(dir, kafkaname.PartitionMetadataFile), t.id); err != nil {
		return nil, err
	}
	if err := checkpoint.WriteLeaderEpochs(st.fs, filepath.Join(dir, kafkaname.LeaderEpochFile), nil); err != nil {
		return nil, err
	}
	cfg, err := st.topicConfig(t.stored())
	if err != nil {
		return nil, err
	}
	l, err := st.loadLog(t.name, n, dir, cfg, logCheckpoints{})
	if err != nil {
		return nil, err
	}
	err = st.fs.SyncDir(dir)
	if err == nil {
		err = st.fs.SyncDir(st.dir)
	}
	if err != nil {
		l.close(true)
		return nil, fmt.Errorf("fsync %s: %w", dir, err)
	}
	return l, nil
}

// TopicConfig returns every effective property of topic.
func (st *Store) TopicConfig(name string) ([]partlog.KV, error) {
	st.mu.Lock()
	t, err := st.topicLocked(name)
	var overrides map[string]string
	if err == nil {
		overrides = t.stored()
	}
	st.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cfg, err := st.topicConfig(overrides)
	if err != nil {
		return nil, err
	}
	var out []partlog.KV
	for _, k := range config.Keys() {
		if v, ok := cfg.Get(k); ok {
			src := partlog.SourceDefault
			if _, set := overrides[k]; set {
				src = partlog.SourceTopic
			}
			out = append(out, partlog.KV{Key: k, Value: v, Source: src})
		}
	}
	return out, nil
}

// SetTopicConfig validates kv, then changes those keys persistently.
func (st *Store) SetTopicConfig(name string, kv []partlog.KV) error {
	if st.opt.ReadOnly {
		return fmt.Errorf("config of %q: %w", name, partlog.ErrReadOnly)
	}
	st.WaitOpened() // a pending partition would open with the old configuration
	st.mu.Lock()
	defer st.mu.Unlock()
	t, err := st.topicLocked(name)
	if err != nil {
		return err
	}
	if err := st.stored.unusable(name); err != nil {
		return fmt.Errorf("config of %q: %w", name, err)
	}
	for _, p := range kv {
		if !config.Known(p.Key) {
			return fmt.Errorf("%w: unknown property %q", config.ErrInvalid, p.Key)
		}
	}
	next := make(map[string]string, len(t.overrides)+len(kv))
	for k, v := range t.overrides {
		next[k] = v
	}
	for _, p := range kv {
		next[p.Key] = p.Value
	}
	cfg, err := st.topicConfig(t.storedWith(next))
	if err != nil {
		return err // config's errors are partlog.ErrInvalid
	}
	oldRaw, hadRaw := st.stored.raw[name]
	oldSum, hadSum := st.stored.sums[name]
	oldGen, hadGen := st.stored.gens[name]
	gen := st.nextTopicGen(t)
	if err := st.stored.set(name, next, gen); err != nil {
		return err
	}
	if err := st.writeTopicsFile(); err != nil {
		delete(st.stored.raw, name)
		delete(st.stored.sums, name)
		delete(st.stored.gens, name)
		if hadRaw {
			st.stored.raw[name] = oldRaw
		}
		if hadSum {
			st.stored.sums[name] = oldSum
		}
		if hadGen {
			st.stored.gens[name] = oldGen
		}
		return fmt.Errorf("persist config of %q: %w", name, err)
	}
	t.overrides = next
	for _, l := range t.logs {
		if l != nil {
			l.setConfig(cfg)
			l.setTopicGen(gen)
		}
	}
	return nil
}

func isNotExist(err error) bool { return err != nil && errors.Is(err, os.ErrNotExist) }
