package e2e

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/record"
)

// TestCatOfDamagedBaseOffset raises the base offset of one batch (which no
// CRC covers) by one in a cleanly closed data directory: cat of log,
// log.jsonl, @offset and @time fails with EIO and a log line naming the
// segment file and the batch's position, instead of serving the record
// under the next offset and dropping that one.
func TestCatOfDamagedBaseOffset(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && for i in $(seq 0 9); do echo v$i >> t/0/log; done")
	l := e.log("t", 0)
	_, pos, err := l.Locate(5)
	if err != nil {
		t.Fatal(err)
	}
	e.Unmount()
	seg := filepath.Join(e.data, "t-0", "00000000000000000000.log")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint64(b[pos:], 6)
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e = mountAt(t, e.data, mountOpt{})
	for _, f := range []string{"log", "log.jsonl", "@offset/3", "@offset/6.jsonl", "@time/0"} {
		out, err := e.Try("cat t/0/" + f)
		if err == nil || !strings.Contains(err.Error(), "Input/output error") {
			t.Errorf("cat %s: %q, %v; want EIO", f, out, err)
		}
		if strings.Contains(out, "v5") {
			t.Errorf("cat %s served the damaged batch's record: %q", f, out)
		}
	}
	if logs := e.logs.String(); !strings.Contains(logs, seg) || !strings.Contains(logs, "at position "+itoa(pos)) {
		t.Errorf("no log line naming %s at position %d:\n%s", seg, pos, logs)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestGroupsWithMissingOffsetsPartition removes partition 0 of
// __consumer_offsets: the group stored in partition 1 is still listed and
// read, the partition left out is logged.
func TestGroupsWithMissingOffsetsPartition(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir __consumer_offsets __consumer_offsets/1 orders && seq 1 10 >> orders/0/log")
	l := e.log("__consumer_offsets", 1)
	k := kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "orders", Partition: 0}
	v := kmsg.OffsetCommitValue{Version: 3, Offset: 4, LeaderEpoch: -1, CommitTimestamp: 1700000000000}
	if _, err := l.Append([]record.Record{{Key: k.AppendTo(nil), Value: v.AppendTo(nil)}}); err != nil {
		t.Fatal(err)
	}
	e.Unmount()
	if err := os.RemoveAll(filepath.Join(e.data, "__consumer_offsets-0")); err != nil {
		t.Fatal(err)
	}
	e = mountAt(t, e.data, mountOpt{})
	if got := e.Sh("ls .groups"); got != "g\ng.jsonl\n" {
		t.Fatalf("ls .groups: %q", got)
	}
	if got := e.Sh("awk 'NR==2 {print $1, $2, $4, $5}' .groups/g"); got != "g orders 4 10\n" {
		t.Fatalf("cat .groups/g: %q", got)
	}
	if got := e.Sh("jq -r .current_offset .groups/g.jsonl"); got != "4\n" {
		t.Fatalf("cat .groups/g.jsonl: %q", got)
	}
	if !strings.Contains(e.logs.String(), "groups stored there are left out") {
		t.Errorf("no log line about the partition left out:\n%s", e.logs.String())
	}
}
