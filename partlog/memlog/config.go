package memlog

import (
	"fmt"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/partlog"
)

// baseConfig is Kafka's topic defaults (config.Defaults) with the mount's
// defaults applied; an invalid mount default is kept as the error every
// topic operation then returns.
func baseConfig(mount map[string]string) (config.Topic, error) {
	base, err := config.Apply(config.Defaults(), mount)
	if err != nil {
		return config.Defaults(), fmt.Errorf("mount config defaults: %w", err)
	}
	return base, nil
}

// topicConfig is the effective configuration of overrides on the base;
// config validates every value (its errors are partlog.ErrInvalid).
func (s *Store) topicConfig(overrides map[string]string) (config.Topic, error) {
	if s.baseErr != nil {
		return config.Topic{}, s.baseErr
	}
	return config.Apply(s.base, overrides)
}

// kvs lists every property of cfg with its value and source (set: the
// topic's own settings), in config's order.
func kvs(cfg config.Topic, set map[string]string) []partlog.KV {
	pairs := cfg.KVs()
	out := make([]partlog.KV, len(pairs))
	for i, p := range pairs {
		src := partlog.SourceDefault
		if _, ok := set[p[0]]; ok {
			src = partlog.SourceTopic
		}
		out[i] = partlog.KV{Key: p[0], Value: p[1], Source: src}
	}
	return out
}
