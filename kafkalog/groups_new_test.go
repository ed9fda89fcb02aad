package kafkalog

import (
	"errors"
	"testing"

	"github.com/partfs/partfs/partlog"
)

// TestNewGroup: a group the cluster does not know is ErrNotFound, and a
// commit to it creates it with those offsets.
func TestNewGroup(t *testing.T) {
	s := open(t, cluster(t))
	if err := s.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DescribeGroup("g"); !errors.Is(err, partlog.ErrNotFound) {
		t.Fatalf("describe of an unknown group: %v, want ErrNotFound", err)
	}
	if err := s.CommitOffsets("g", []partlog.GroupOffset{{Topic: "t", Partition: 0, Offset: 0}}); err != nil {
		t.Fatalf("first commit of a new group: %v", err)
	}
	g, err := s.DescribeGroup("g")
	if err != nil || len(g.Offsets) != 1 || g.Offsets[0] != (partlog.GroupOffset{Topic: "t", Partition: 0, Offset: 0}) {
		t.Fatalf("after the commit: %+v %v", g, err)
	}
}
