package kafkalog

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/partlog"
)

// metaMaxAge is how long a topic list is used before it is asked again.
const metaMaxAge = time.Second

// topicMeta is what metadata says of a topic.
type topicMeta struct {
	id       [16]byte
	internal bool
	leaders  []int32 // by partition; -1 when none
}

// metadata caches the cluster's topics, leaders and brokers.
type metadata struct {
	mu        sync.Mutex
	topics    map[string]*topicMeta // REQUIRES: mu held
	brokers   map[int32]string      // REQUIRES: mu held; node ID -> host:port
	clusterID string                // REQUIRES: mu held
	all       time.Time             // REQUIRES: mu held; when topics was last listed whole
}

// refresh asks for the metadata of topics (all topics when none) and
// takes it into the cache. A topic that no longer exists leaves the cache.
func (s *Store) refresh(ctx context.Context, topics ...string) error {
	req := kmsg.NewPtrMetadataRequest()
	if len(topics) > 0 {
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return err
	}
	m := &s.meta
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.topics == nil || len(topics) == 0 {
		m.topics = map[string]*topicMeta{}
	}
	m.brokers = map[int32]string{}
	for _, b := range resp.Brokers {
		m.brokers[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	if resp.ClusterID != nil {
		m.clusterID = *resp.ClusterID
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		if e := kerr.ErrorForCode(t.ErrorCode); e != nil {
			delete(m.topics, *t.Topic)
			if len(topics) > 0 && e != kerr.UnknownTopicOrPartition && e != kerr.LeaderNotAvailable {
				return e
			}
			continue
		}
		tm := &topicMeta{id: t.TopicID, internal: t.IsInternal, leaders: make([]int32, len(t.Partitions))}
		for i := range tm.leaders {
			tm.leaders[i] = -1
		}
		for _, p := range t.Partitions {
			if p.Partition >= 0 && int(p.Partition) < len(tm.leaders) && p.ErrorCode == 0 {
				tm.leaders[p.Partition] = p.Leader
			}
		}
		m.topics[*t.Topic] = tm
	}
	if len(topics) == 0 {
		m.all = time.Now()
	}
	return nil
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

// seeds names the seed brokers, for messages about calls not yet routed.
func (s *Store) seeds() string {
	if len(s.opt.Brokers) == 1 {
		return s.opt.Brokers[0]
	}
	return fmt.Sprint(s.opt.Brokers)
}

// topic returns the cached metadata of topic, asking when absent.
func (s *Store) topic(ctx context.Context, name string) (*topicMeta, error) {
	if tm := s.cached(name); tm != nil {
		return tm, nil
	}
	if err := s.refresh(ctx, name); err != nil {
		return nil, err
	}
	if tm := s.cached(name); tm != nil {
		return tm, nil
	}
	return nil, fmt.Errorf("topic %q: %w", name, partlog.ErrNotFound)
}

func (s *Store) cached(name string) *topicMeta {
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	return s.meta.topics[name]
}

// leader returns the leader's node ID and address for a partition,
// asking for metadata when it is not known; fresh forces the asking.
func (s *Store) leader(ctx context.Context, topic string, p int32, fresh bool) (int32, string, [16]byte, error) {
	if fresh {
		if err := s.refresh(ctx, topic); err != nil {
			return -1, "", [16]byte{}, err
		}
	}
	for try := 0; ; try++ {
		tm, err := s.topic(ctx, topic)
		if err != nil {
			return -1, "", [16]byte{}, err
		}
		if int(p) >= len(tm.leaders) {
			return -1, "", [16]byte{}, fmt.Errorf("partition %d of %s: %w", p, topic, partlog.ErrNotFound)
		}
		if id := tm.leaders[p]; id >= 0 {
			s.meta.mu.Lock()
			addr := s.meta.brokers[id]
			s.meta.mu.Unlock()
			return id, addr, tm.id, nil
		}
		// no leader now (an election): ask again after a pause
		if err := pause(ctx, try); err != nil {
			return -1, "", [16]byte{}, err
		}
		if err := s.refresh(ctx, topic); err != nil {
			return -1, "", [16]byte{}, err
		}
	}
}

// pause waits before a retry: 20 ms doubling to 500 ms, or until ctx ends.
func pause(ctx context.Context, try int) error {
	d := min(20*time.Millisecond<<min(try, 5), 500*time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
