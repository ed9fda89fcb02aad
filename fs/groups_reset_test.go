package fs

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// TestGroupsReset: lines written to .groups/G commit offsets as
// kafka-consumer-groups.sh --reset-offsets --execute does, appended to the
// __consumer_offsets partition Kafka chooses for G, in Kafka's format
// (read back by the decoders: decoded.jsonl and .groups/G); earliest,
// latest, @T and out-of-range numbers resolve as Kafka's tool does; a
// malformed line is EINVAL, an unknown partition ENOENT, a group with
// members EBUSY, and nothing of such a write is committed.
func TestGroupsReset(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	const parts = 5
	for _, tp := range []string{"__consumer_offsets", "orders"} {
		if err := st.CreateTopic(tp); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < parts; i++ {
		if err := st.AddPartition("__consumer_offsets", i); err != nil {
			t.Fatal(err)
		}
	}
	m.Sh("seq 1 10 >> orders/0/log")
	const group = "reset-me"
	p := internaltopic.GroupPartition(group, parts)
	decoded := fmt.Sprintf("__consumer_offsets/%d/decoded.jsonl", p)
	current := func() string { return m.Sh("awk 'NR==2 {print $4, $5, $6}' .groups/" + group) }

	m.Sh("echo 'orders 0 3' > .groups/" + group)
	if got := current(); got != "3 10 7\n" {
		t.Fatalf("after reset to 3: %q", got)
	}
	if got := m.Sh("jq -c '[.type,.key.group,.key.topic,.key.partition,.value.offset]' " + decoded); got != `["offset_commit","reset-me","orders",0,3]`+"\n" {
		t.Fatalf("partition %d holds %q", p, got)
	}
	for _, c := range []struct{ spec, want string }{
		{"latest", "10 10 0\n"}, {"earliest", "0 10 10\n"}, {"99", "10 10 0\n"},
		{"@4102444800000", "10 10 0\n"}, {"@-1h", "0 10 10\n"}, {"7", "7 10 3\n"},
	} {
		m.Sh("echo 'orders 0 " + c.spec + "' > .groups/" + group)
		if got := current(); got != c.want {
			t.Errorf("after reset to %s: %q, want %q", c.spec, got, c.want)
		}
	}
	commits := m.Sh("wc -l < " + decoded)
	for _, c := range []struct {
		lines string
		errno syscall.Errno
	}{
		{"orders 0 1\norders x 1\n", syscall.EINVAL},
		{"orders 0 1\norders 0\n", syscall.EINVAL},
		{"orders 0 1\norders 0 @yesterday\n", syscall.EINVAL},
		{"orders 0 1\nmissing 0 1\n", syscall.ENOENT},
		{"orders 0 1\norders 3 1\n", syscall.ENOENT},
	} {
		f := m.open(".groups/"+group, os.O_WRONLY|os.O_TRUNC)
		_, err := f.Write([]byte(c.lines)) // one write(): all or nothing
		f.Close()
		if !errors.Is(err, c.errno) {
			t.Errorf("writing %q: %v, want %v", c.lines, err, c.errno)
		}
	}
	if got := m.Sh("wc -l < " + decoded); got != commits {
		t.Errorf("refused writes committed: %s lines, %s before", got, commits)
	}
	if got := current(); got != "7 10 3\n" {
		t.Errorf("after refused writes: %q", got)
	}

	busy := "busy-group"
	l, err := st.Partition("__consumer_offsets", internaltopic.GroupPartition(busy, parts))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([]record.Record{groupRecord(busy, "member-1", "orders", 0)}); err != nil {
		t.Fatal(err)
	}
	if out, err := m.Try("echo 'orders 0 1' > .groups/" + busy); err == nil || !strings.Contains(err.Error()+out, "Device or resource busy") {
		t.Errorf("reset of a group with members: %v %q, want EBUSY", err, out)
	}
	if out, err := m.Try("echo 'orders 0 1' > .groups/" + group + ".jsonl"); err == nil {
		t.Errorf("writing the .jsonl twin: %q", out)
	}
}
