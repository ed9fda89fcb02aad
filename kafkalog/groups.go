package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/partfs/partfs/partlog"
)

var _ partlog.GroupStore = (*Store)(nil)

// GroupNames lists the cluster's consumer groups (ListGroups on every broker).
func (s *Store) GroupNames() ([]string, error) {
	var names []string
	err := s.call(where{broker: s.seeds(), partition: -1}, "list groups", func(ctx context.Context) error {
		gs, err := s.adm.ListGroups(ctx)
		names = gs.Groups()
		if err != nil && len(names) > 0 {
			// the groups of the brokers that answered; the error is logged
			s.opt.Logger.WithError(err).Warn("listing consumer groups: some brokers did not answer")
			return nil
		}
		return err
	})
	return names, err
}

// DescribeGroup returns group's members (DescribeGroups) and committed
// offsets (OffsetFetch); a group the coordinator does not know and that
// has no offsets is partlog.ErrNotFound.
func (s *Store) DescribeGroup(group string) (partlog.Group, error) {
	var g partlog.Group
	w := where{broker: s.seeds(), topic: "group " + group, partition: -1}
	err := s.call(w, "describe group", func(ctx context.Context) error {
		dg, err := s.describeGroup(ctx, group)
		if err != nil {
			return err
		}
		offs, err := s.adm.FetchOffsets(ctx, group)
		if errors.Is(err, kerr.GroupIDNotFound) {
			return nil // no such group: ErrNotFound below
		}
		if err != nil {
			return err
		}
		offs.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				g.Offsets = append(g.Offsets, partlog.GroupOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.At})
			}
		})
		for _, m := range dg.Members {
			gm := partlog.GroupMember{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost}
			if c, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range c.Topics {
					for _, p := range t.Partitions {
						gm.Assigned = append(gm.Assigned, partlog.GroupOffset{Topic: t.Topic, Partition: p})
					}
				}
			}
			g.Members = append(g.Members, gm)
		}
		return nil
	})
	if err != nil {
		return partlog.Group{}, err
	}
	if len(g.Offsets) == 0 && len(g.Members) == 0 {
		return partlog.Group{}, fmt.Errorf("consumer group %s: %w", group, partlog.ErrNotFound)
	}
	sort.Slice(g.Offsets, func(i, j int) bool {
		a, b := g.Offsets[i], g.Offsets[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return g, nil
}

func (s *Store) describeGroup(ctx context.Context, group string) (kadm.DescribedGroup, error) {
	dgs, err := s.adm.DescribeGroups(ctx, group)
	if err != nil {
		return kadm.DescribedGroup{}, err
	}
	dg := dgs[group]
	if errors.Is(dg.Err, kerr.GroupIDNotFound) {
		// Kafka describes a group it does not know as Dead with no
		// members; some clusters answer GROUP_ID_NOT_FOUND instead.
		return kadm.DescribedGroup{Group: group, State: "Dead"}, nil
	}
	return dg, dg.Err
}

// CommitOffsets commits offsets for group (OffsetCommit with no member
// and generation -1, as kafka-consumer-groups.sh --reset-offsets does),
// after DescribeGroups found it without members; partlog.ErrBusy if it
// has some, or if the coordinator refuses the commit because one joined.
func (s *Store) CommitOffsets(group string, offsets []partlog.GroupOffset) error {
	if s.opt.ReadOnly {
		return fmt.Errorf("commit offsets of group %s: %w", group, partlog.ErrReadOnly)
	}
	w := where{broker: s.seeds(), topic: "group " + group, partition: -1}
	return s.call(w, "commit offsets", func(ctx context.Context) error {
		dg, err := s.describeGroup(ctx, group)
		if err != nil {
			return err
		}
		if len(dg.Members) > 0 {
			return fmt.Errorf("consumer group %s has %d active members (state %s): %w", group, len(dg.Members), dg.State, partlog.ErrBusy)
		}
		var os kadm.Offsets
		for _, o := range offsets {
			os.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset, LeaderEpoch: -1})
		}
		err = s.adm.CommitAllOffsets(ctx, group, os)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration), errors.Is(err, kerr.RebalanceInProgress):
			return fmt.Errorf("consumer group %s: %w: %w", group, partlog.ErrBusy, err)
		}
		return err
	})
}
