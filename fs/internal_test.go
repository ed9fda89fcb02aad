package fs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

func commitRecord(group, topic string, p int32, off int64) record.Record {
	k := kmsg.OffsetCommitKey{Version: 1, Group: group, Topic: topic, Partition: p}
	r := record.Record{Key: k.AppendTo(nil)}
	if off >= 0 {
		v := kmsg.OffsetCommitValue{Version: 3, Offset: off, LeaderEpoch: -1, CommitTimestamp: 1700000000000}
		r.Value = v.AppendTo(nil)
	}
	return r
}

func groupRecord(group, member, topic string, parts ...int32) record.Record {
	asg := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: parts}}}
	k := kmsg.GroupMetadataKey{Version: 2, Group: group}
	v := kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Generation: 1,
		Members: []kmsg.GroupMetadataValueMember{{MemberID: member, ClientID: "cli", ClientHost: "/10.1.2.3", Assignment: asg.AppendTo(nil)}}}
	return record.Record{Key: k.AppendTo(nil), Value: v.AppendTo(nil)}
}

func appendTo(t *testing.T, st partlog.Store, topic string, recs ...record.Record) {
	t.Helper()
	l, err := st.Partition(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(recs); err != nil {
		t.Fatal(err)
	}
}

// TestDecodedAndGroups: decoded.jsonl of __consumer_offsets decodes each
// record (a tombstone as value null) and follows appends under tail -f;
// .groups/<group> describes committed offsets, log end offsets and lag
// like kafka-consumer-groups.sh, and shows new commits.
func TestDecodedAndGroups(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	for _, tp := range []string{"__consumer_offsets", "orders"} {
		if err := st.CreateTopic(tp); err != nil {
			t.Fatal(err)
		}
	}
	m.Sh("seq 1 10 >> orders/0/log")
	appendTo(t, st, "__consumer_offsets", commitRecord("g1", "orders", 0, 4), groupRecord("g1", "member-1", "orders", 0),
		commitRecord("g2", "orders", 0, 2), commitRecord("g2", "orders", 0, -1))

	if ls := m.Sh("ls __consumer_offsets/0"); !strings.Contains(ls, "decoded.jsonl") {
		t.Fatalf("ls: %s", ls)
	}
	if ls := m.Sh("ls orders/0"); strings.Contains(ls, "decoded.jsonl") {
		t.Fatalf("decoded.jsonl of a plain topic: %s", ls)
	}
	lines := strings.Split(strings.TrimSpace(m.Sh("cat __consumer_offsets/0/decoded.jsonl")), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	var first, last map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[3]), &last)
	if first["type"] != "offset_commit" || first["value"].(map[string]any)["offset"] != 4.0 || first["key"].(map[string]any)["group"] != "g1" {
		t.Fatalf("first %s", lines[0])
	}
	if last["value"] != nil || last["offset"] != 3.0 {
		t.Fatalf("tombstone %s", lines[3])
	}
	if got := m.Sh("jq -r .type __consumer_offsets/0/decoded.jsonl | sort | uniq -c | tr -s ' '"); got != " 1 group_metadata\n 3 offset_commit\n" {
		t.Fatalf("types %q", got)
	}

	if got := m.Sh("ls .groups"); got != "g1\ng1.jsonl\n" {
		t.Fatalf("groups %q", got)
	}
	desc := m.Sh("cat .groups/g1")
	want := "GROUP TOPIC  PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST      CLIENT-ID\n" +
		"g1    orders 0         4              10             6   member-1    /10.1.2.3 cli\n"
	if desc != want {
		t.Fatalf("describe:\n%s\nwant:\n%s", desc, want)
	}
	if got := m.Sh("jq -c '[.topic,.partition,.current_offset,.log_end_offset,.lag,.client_id]' .groups/g1.jsonl"); got != `["orders",0,4,10,6,"cli"]`+"\n" {
		t.Fatalf("jsonl %q", got)
	}
	if _, err := m.Try("cat .groups/g2"); err == nil {
		t.Fatal("g2 (all offsets deleted) still there")
	}

	// a new commit shows at the next read; tail -f of decoded.jsonl follows
	type result struct {
		out string
		err error
	}
	done := make(chan result)
	go func() {
		out, err := m.Try(`timeout 10 tail -n +1 -s 0.1 -f __consumer_offsets/0/decoded.jsonl | grep -m1 '"offset":8'; exit 0`)
		done <- result{out, err}
	}()
	time.Sleep(300 * time.Millisecond)
	appendTo(t, st, "__consumer_offsets", commitRecord("g1", "orders", 0, 8))
	if got := <-done; got.err != nil || !strings.Contains(got.out, `{"offset":4,`) || !strings.Contains(got.out, `"group":"g1"`) {
		t.Fatalf("tail -f: %q %v", got.out, got.err)
	}
	if got := m.Sh("awk 'NR==2 {print $4, $6}' .groups/g1"); got != "8 2\n" {
		t.Fatalf("after commit: %q", got)
	}
}
