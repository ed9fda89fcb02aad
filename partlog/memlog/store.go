// Package memlog is an in-memory partlog.Store: the reference backend that
// fs/ is tested against, and a model of the partition log's observable rules
// (offsets, segments, snapshots, ListOffsets by time, sidecars). Topic
// configurations are package config's: its defaults, its validation. It
// keeps records in memory only; nothing is durable, and it has no segment
// files (no partlog.SegmentFiler). A segment's Stamp is its ID: IDs are
// never reused in a store, and nothing outlives it.
package memlog

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/partlog"
)

// Options configure a Store.
type Options struct {
	Now      func() time.Time  // clock for timestamps (default time.Now)
	ReadOnly bool              // every change fails with ErrReadOnly
	Defaults map[string]string // mount-wide config defaults (not stored)
}

// Store is an in-memory set of topics.
type Store struct {
	opt     Options
	base    config.Topic  // config.Defaults with opt.Defaults applied
	baseErr error         // opt.Defaults did not validate
	nextID  atomic.Uint64 // segment IDs

	mu     sync.Mutex
	topics map[string]*topic // REQUIRES: mu held
	closed bool
}

type topic struct {
	name  string
	conf  map[string]string
	parts []*Log
}

var _ partlog.Store = (*Store)(nil)

// New returns an empty store.
func New(opt Options) *Store {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	base, err := baseConfig(opt.Defaults)
	return &Store{opt: opt, base: base, baseErr: err, topics: map[string]*topic{}}
}

// Topics returns the topic names, sorted.
func (s *Store) Topics() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.topics)), nil
}

// topic returns the topic named name. REQUIRES: mu held.
func (s *Store) topic(name string) (*topic, error) {
	return partlog.LookupTopic(s.topics, name)
}

// topicToChange is topic, on a store that may change (else ErrReadOnly).
// REQUIRES: mu held.
func (s *Store) topicToChange(name string) (*topic, error) {
	if s.opt.ReadOnly {
		return nil, partlog.ErrReadOnly
	}
	return s.topic(name)
}

// Partitions returns the partition count of topic.
func (s *Store) Partitions(name string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.topic(name)
	if err != nil {
		return 0, err
	}
	return len(t.parts), nil
}

// CreateTopic creates a topic with partition 0.
func (s *Store) CreateTopic(name string) error {
	if err := partlog.CheckTopic(name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opt.ReadOnly {
		return partlog.ErrReadOnly
	}
	if _, ok := s.topics[name]; ok {
		return fmt.Errorf("topic %q: %w", name, partlog.ErrExists)
	}
	if err := partlog.CheckNewTopic(name, slices.Collect(maps.Keys(s.topics))); err != nil {
		return err
	}
	if s.baseErr != nil {
		return s.baseErr
	}
	t := &topic{name: name, conf: map[string]string{}}
	s.topics[name] = t
	t.parts = append(t.parts, s.newLog(t, 0))
	return nil
}

// AddPartition adds partition n, which must equal the partition count.
func (s *Store) AddPartition(name string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.topicToChange(name)
	if err != nil {
		return err
	}
	if err := partlog.CheckNextPartition(name, n, len(t.parts)); err != nil {
		return err
	}
	t.parts = append(t.parts, s.newLog(t, n))
	return nil
}

// Partition returns partition n of topic.
func (s *Store) Partition(name string, n int) (partlog.Log, error) {
	l, err := s.Log(name, n)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Log returns the concrete log, for tests that drive retention/compaction.
func (s *Store) Log(name string, n int) (*Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.topic(name)
	if err != nil {
		return nil, err
	}
	if n < 0 || n >= len(t.parts) {
		return nil, fmt.Errorf("partition %s-%d: %w", name, n, partlog.ErrNotFound)
	}
	return t.parts[n], nil
}

// TopicConfig returns the effective configuration of topic.
func (s *Store) TopicConfig(name string) ([]partlog.KV, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.topic(name)
	if err != nil {
		return nil, err
	}
	cfg, err := s.topicConfig(t.conf)
	if err != nil {
		return nil, err
	}
	return kvs(cfg, t.conf), nil
}

// SetTopicConfig validates all of kv, then applies it.
func (s *Store) SetTopicConfig(name string, kv []partlog.KV) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.topicToChange(name)
	if err != nil {
		return err
	}
	next := make(map[string]string, len(t.conf)+len(kv))
	for k, v := range t.conf {
		next[k] = v
	}
	for _, p := range kv {
		next[p.Key] = p.Value
	}
	if _, err := s.topicConfig(next); err != nil {
		return fmt.Errorf("config of %q: %w", name, err)
	}
	t.conf = next
	return nil
}

// ReadOnly reports whether the store refuses changes.
func (s *Store) ReadOnly() bool { return s.opt.ReadOnly }

// Close marks the store closed; it is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *Store) newID() uint64 { return s.nextID.Add(1) }

// config returns the effective configuration of t; its overrides were
// validated when set, so only an invalid mount default fails (and then
// CreateTopic made no topic).
func (s *Store) config(t *topic) config.Topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg, _ := s.topicConfig(t.conf)
	return cfg
}
