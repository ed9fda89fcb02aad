package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// Store is a Kafka cluster as a partlog.Store.
type Store struct {
	opt  Options
	cl   *kgo.Client
	adm  *kadm.Client
	meta metadata
	// cache is the cache directory, reached without symbolic links
	cache vfs.FS
	rest  restCache // parts of fetch answers past their tiles (rest.go)

	mu     sync.Mutex
	logs   map[partKey]*Log      // REQUIRES: mu held
	confs  map[string]*topicConf // REQUIRES: mu held; for appends
	closed bool                  // REQUIRES: mu held
	// downUntil: calls fail at once until then (see quarantine)
	downUntil time.Time // REQUIRES: mu held
	downErr   error     // the failure that began the quarantine; REQUIRES: mu held
}

type partKey struct {
	topic string
	n     int32
}

var _ partlog.Store = (*Store)(nil)

// Open connects to the cluster and reads its metadata once, so that a
// wrong address or refused credentials fail here.
func Open(opt Options) (*Store, error) {
	opt.withDefaults()
	if len(opt.Brokers) == 0 {
		return nil, errors.New("no Kafka broker given")
	}
	kopts, err := opt.clientOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	s := &Store{opt: opt, cl: cl, adm: kadm.NewClient(cl), logs: map[partKey]*Log{}, confs: map[string]*topicConf{}}
	if err := s.call(where{broker: s.seeds(), partition: -1}, "metadata", func(ctx context.Context) error { return s.refresh(ctx) }); err != nil {
		cl.Close()
		if opt.SASL != "" {
			// a refused login often shows only as a closed connection
			err = fmt.Errorf("SASL %s as %q (is the password right?): %w", opt.SASL, opt.User, err)
		}
		return nil, err
	}
	if s.opt.CacheDir == "" {
		s.opt.CacheDir = DefaultCacheDir(s.ClusterID())
	}
	if err := os.MkdirAll(s.opt.CacheDir, 0o700); err != nil {
		cl.Close()
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	s.cache = vfs.Beneath(s.opt.CacheDir)
	return s, nil
}

// ClusterID is the cluster's ID as metadata gives it.
func (s *Store) ClusterID() string {
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	return s.meta.clusterID
}

// CacheDir is the directory holding the sidecars.
func (s *Store) CacheDir() string { return s.opt.CacheDir }

// listed returns the topic metadata, asking the cluster when the last
// listing is older than metaMaxAge.
func (s *Store) listed() (map[string]*topicMeta, error) {
	s.meta.mu.Lock()
	fresh := time.Since(s.meta.all) < metaMaxAge
	s.meta.mu.Unlock()
	if !fresh {
		err := s.call(where{broker: s.seeds(), partition: -1}, "metadata", func(ctx context.Context) error { return s.refresh(ctx) })
		if err != nil {
			return nil, err
		}
	}
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	out := make(map[string]*topicMeta, len(s.meta.topics))
	for n, t := range s.meta.topics {
		out[n] = t
	}
	return out, nil
}

func (s *Store) hidden(name string, tm *topicMeta) bool {
	if s.opt.ShowInternal {
		return false
	}
	return tm.internal || name == "__consumer_offsets" || name == "__transaction_state"
}

// Topics returns the cluster's topic names, sorted; internal topics only
// with Options.ShowInternal. A cluster that does not answer gives its
// error.
func (s *Store) Topics() ([]string, error) {
	ts, err := s.listed()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ts))
	for n, tm := range ts {
		if !s.hidden(n, tm) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Partitions returns the partition count of topic.
func (s *Store) Partitions(topic string) (int, error) {
	return s.partitions(topic, 0)
}

// partitions returns the partition count of topic, asking the cluster
// about the topic when the listing (up to metaMaxAge old) lacks it or
// has no more than least partitions: one another client just created
// is found at once.
func (s *Store) partitions(topic string, least int) (int, error) {
	ts, err := s.listed()
	if err != nil {
		return 0, err
	}
	if tm := ts[topic]; (tm == nil || len(tm.leaders) <= least) && partlog.CheckTopic(topic) == nil {
		err := s.call(where{broker: s.seeds(), topic: topic, partition: -1}, "metadata", func(ctx context.Context) error { return s.refresh(ctx, topic) })
		if err != nil {
			return 0, err
		}
		ts[topic] = s.cached(topic)
	}
	tm := ts[topic]
	if tm == nil || s.hidden(topic, tm) {
		return 0, fmt.Errorf("topic %q: %w", topic, partlog.ErrNotFound)
	}
	return len(tm.leaders), nil
}

// CreateTopic creates topic with one partition and the cluster's default
// replication factor (CreateTopics), and waits until it has a leader.
func (s *Store) CreateTopic(topic string) error {
	w := where{broker: s.seeds(), topic: topic, partition: -1}
	if err := partlog.CheckTopic(topic); err != nil {
		return err
	}
	if s.opt.ReadOnly {
		return fmt.Errorf("%s: create: %w", w, partlog.ErrReadOnly)
	}
	return s.call(w, "create topic", func(ctx context.Context) error {
		resp, err := s.adm.CreateTopic(ctx, 1, -1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			if resp.ErrMessage != "" {
				err = fmt.Errorf("%w (%s)", err, resp.ErrMessage)
			}
			return err
		}
		return s.awaitLeaders(ctx, topic, 1)
	})
}

// awaitLeaders waits until metadata shows a leader for partitions 0..n-1.
func (s *Store) awaitLeaders(ctx context.Context, topic string, n int) error {
	for try := 0; ; try++ {
		if err := s.refresh(ctx, topic); err == nil {
			if tm := s.cached(topic); tm != nil && len(tm.leaders) >= n && tm.leaders[n-1] >= 0 {
				s.meta.mu.Lock()
				s.meta.all = time.Time{} // list again: the topic count changed
				s.meta.mu.Unlock()
				return nil
			}
		}
		if err := pause(ctx, try); err != nil {
			return err
		}
	}
}

// AddPartition adds partition n (CreatePartitions to a total of n+1).
func (s *Store) AddPartition(topic string, n int) error {
	w := where{broker: s.seeds(), topic: topic, partition: int32(n)}
	if s.opt.ReadOnly {
		return fmt.Errorf("%s: add partition: %w", w, partlog.ErrReadOnly)
	}
	count, err := s.Partitions(topic)
	if err != nil {
		return err
	}
	if err := partlog.CheckNextPartition(topic, n, count); err != nil {
		return fmt.Errorf("%s: %w", w, err)
	}
	return s.call(w, "create partitions", func(ctx context.Context) error {
		resps, err := s.adm.UpdatePartitions(ctx, n+1, topic)
		if err == nil {
			var r kadm.CreatePartitionsResponse
			if r, err = resps.On(topic, nil); err == nil {
				err = r.Err
			}
		}
		if err != nil {
			return err
		}
		return s.awaitLeaders(ctx, topic, n+1)
	})
}

// Partition returns partition n of topic (the same *Log every time).
func (s *Store) Partition(topic string, n int) (partlog.Log, error) {
	count, err := s.partitions(topic, n)
	if err != nil {
		return nil, err
	}
	if n < 0 || n >= count {
		return nil, fmt.Errorf("partition %d of %s (%d partitions): %w", n, topic, count, partlog.ErrNotFound)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := partKey{topic, int32(n)}
	l := s.logs[k]
	if l == nil {
		l = newLog(s, topic, int32(n))
		s.logs[k] = l
	}
	return l, nil
}

// TopicConfig returns every config of topic as the cluster describes it.
func (s *Store) TopicConfig(topic string) ([]partlog.KV, error) {
	return s.topicConfig(s.call, topic)
}

// caller runs one call to the cluster: Store.call, or a Log's bounded by
// its request.
type caller func(w where, op string, fn func(ctx context.Context) error) error

// topicConfig is TopicConfig asking through call.
func (s *Store) topicConfig(call caller, topic string) ([]partlog.KV, error) {
	w := where{broker: s.seeds(), topic: topic, partition: -1}
	var rc kadm.ResourceConfig
	err := call(w, "describe configs", func(ctx context.Context) error {
		rcs, err := s.adm.DescribeTopicConfigs(ctx, topic)
		if err == nil {
			if rc, err = rcs.On(topic, nil); err == nil {
				err = rc.Err
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]partlog.KV, 0, len(rc.Configs))
	reported := map[string]bool{}
	for _, c := range rc.Configs {
		out = append(out, partlog.KV{Key: c.Key, Value: c.MaybeValue(), Source: sourceName(c.Source)})
		reported[c.Key] = true
	}
	// What the cluster does not report is Kafka's default, as
	// config.Reported takes it for the rules partfs applies.
	def := config.Defaults()
	for _, k := range config.Keys() {
		if v, ok := def.Get(k); ok && !reported[k] {
			out = append(out, partlog.KV{Key: k, Value: v, Source: partlog.SourceAssumed})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// sourceName is partlog's word for where a cluster's config value comes
// from, or Kafka's.
func sourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return partlog.SourceTopic
	case kmsg.ConfigSourceDefaultConfig:
		return partlog.SourceDefault
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "broker (dynamic)"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "cluster-wide broker default (dynamic)"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "broker (server.properties)"
	}
	return strings.ToLower(s.String())
}

// SetTopicConfig sets the keys of kv (IncrementalAlterConfigs), after the
// cluster validated the whole change: a refusal changes nothing.
func (s *Store) SetTopicConfig(topic string, kv []partlog.KV) error {
	w := where{broker: s.seeds(), topic: topic, partition: -1}
	if s.opt.ReadOnly {
		return fmt.Errorf("%s: alter configs: %w", w, partlog.ErrReadOnly)
	}
	if err := s.precheck(topic, kv); err != nil {
		return err
	}
	alter := make([]kadm.AlterConfig, len(kv))
	for i, c := range kv {
		alter[i] = kadm.AlterConfig{Op: kadm.SetConfig, Name: c.Key, Value: kadm.StringPtr(c.Value)}
	}
	err := s.call(w, "alter configs", func(ctx context.Context) error {
		for _, fn := range []func(context.Context, []kadm.AlterConfig, ...string) (kadm.AlterConfigsResponses, error){
			s.adm.ValidateAlterTopicConfigs, s.adm.AlterTopicConfigs,
		} {
			resps, err := fn(ctx, alter, topic)
			if err == nil {
				var r kadm.AlterConfigsResponse
				if r, err = resps.On(topic, nil); err == nil && r.Err != nil {
					err = fmt.Errorf("%w (%s)", r.Err, r.ErrMessage)
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.confs, topic)
	s.mu.Unlock()
	return nil
}

// precheck refuses what Kafka refuses but a cluster may take (kfake
// takes any key and value): a key the topic's description does not list
// and package config does not know, a bad value of a key package config
// knows (its rules are Kafka's).
func (s *Store) precheck(topic string, kv []partlog.KV) error {
	described, err := s.TopicConfig(topic)
	if err != nil {
		return err
	}
	listed := make(map[string]bool, len(described))
	for _, c := range described {
		listed[c.Key] = true
	}
	t := config.Defaults()
	for _, c := range kv {
		if config.Known(c.Key) {
			if err := t.Set(c.Key, c.Value); err != nil {
				return fmt.Errorf("topic %s: %w", topic, err)
			}
		} else if !listed[c.Key] {
			return fmt.Errorf("topic %s: unknown config %q: %w", topic, c.Key, partlog.ErrInvalid)
		}
	}
	return nil
}

// ReadOnly reports whether every change is refused.
func (s *Store) ReadOnly() bool { return s.opt.ReadOnly }

// Close saves the tiles' prints and ends the client. Appends are
// synchronous: nothing is in flight once the filesystem stopped calling.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	logs := make([]*Log, 0, len(s.logs))
	for _, l := range s.logs {
		logs = append(logs, l)
	}
	s.mu.Unlock()
	if !s.opt.ReadOnly {
		for _, l := range logs {
			if err := l.savePrints(); err != nil {
				s.opt.Logger.WithError(err).WithField("partition", fmt.Sprintf("%s-%d", l.topic, l.part)).Warn("tile prints not saved")
			}
		}
	}
	s.cl.Close()
	return nil
}

// topicConf is the topic configuration an append uses, and when it was
// described.
type topicConf struct {
	config.Topic
	at time.Time
}

// confMaxAge is how long an append uses a topic's configuration before
// describing it again.
const confMaxAge = 10 * time.Second

// appendConf returns the configuration an append to topic uses, asking
// through call when it is older than confMaxAge.
func (s *Store) appendConf(call caller, topic string) (*topicConf, error) {
	s.mu.Lock()
	c := s.confs[topic]
	s.mu.Unlock()
	if c != nil && time.Since(c.at) < confMaxAge {
		return c, nil
	}
	kvs, err := s.topicConfig(call, topic)
	if err != nil {
		return nil, err
	}
	c = &topicConf{Topic: config.Reported(partlog.KVPairs(kvs)), at: time.Now()}
	s.mu.Lock()
	s.confs[topic] = c
	s.mu.Unlock()
	return c, nil
}
