package internaltopic

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Groups is the state of the classic consumer groups that the records of
// __consumer_offsets describe, folded in offset order: each group's latest
// committed offset per partition and its latest membership. A tombstone
// deletes its key: an offset commit, or a group's membership.
type Groups struct {
	groups map[string]*Group
}

// Group is one consumer group.
type Group struct {
	Name         string
	ProtocolType string
	Generation   int32
	Members      []Member
	Offsets      map[TopicPartition]int64 // committed offset by partition
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Member is one member of a group and what it was assigned.
type Member struct {
	ID, ClientID, Host string
	Assigned           []TopicPartitions
}

// Apply folds one record of __consumer_offsets in; records that do not
// decode, and the KIP-848 records, change nothing.
func (g *Groups) Apply(key, value []byte) {
	v, err := keyVersion(key)
	if err != nil {
		return
	}
	switch v {
	case keyOffsetCommitV0, keyOffsetCommitV1:
		oc, err := parseOffsetCommit(key, value)
		if err != nil {
			return
		}
		tp := TopicPartition{oc.Topic, oc.Partition}
		if oc.Value == nil {
			if grp := g.groups[oc.Group]; grp != nil {
				delete(grp.Offsets, tp)
				g.dropIfEmpty(grp)
			}
			return
		}
		g.group(oc.Group).Offsets[tp] = oc.Value.Offset
	case keyGroupMetadata:
		g.applyMetadata(key, value)
	}
}

func (g *Groups) applyMetadata(key, value []byte) {
	name, err := parseGroupKey(key)
	if err != nil {
		return
	}
	if value == nil {
		if grp := g.groups[name]; grp != nil {
			grp.ProtocolType, grp.Generation, grp.Members = "", 0, nil
			g.dropIfEmpty(grp)
		}
		return
	}
	var v kmsg.GroupMetadataValue
	if v.ReadFrom(value) != nil {
		return
	}
	grp := g.group(name)
	grp.ProtocolType, grp.Generation, grp.Members = v.ProtocolType, v.Generation, nil
	for _, m := range v.Members {
		mem := Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost}
		if v.ProtocolType == "consumer" {
			mem.Assigned, _ = ConsumerAssignment(m.Assignment)
		}
		grp.Members = append(grp.Members, mem)
	}
}

func (g *Groups) group(name string) *Group {
	if g.groups == nil {
		g.groups = map[string]*Group{}
	}
	grp := g.groups[name]
	if grp == nil {
		grp = &Group{Name: name, Offsets: map[TopicPartition]int64{}}
		g.groups[name] = grp
	}
	return grp
}

func (g *Groups) dropIfEmpty(grp *Group) {
	if len(grp.Offsets) == 0 && grp.ProtocolType == "" && len(grp.Members) == 0 {
		delete(g.groups, grp.Name)
	}
}

// Names returns the groups' names, sorted.
func (g *Groups) Names() []string {
	out := make([]string, 0, len(g.groups))
	for n := range g.groups {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Group returns the group named name, or nil.
func (g *Groups) Group(name string) *Group { return g.groups[name] }
