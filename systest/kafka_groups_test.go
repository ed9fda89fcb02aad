package systest

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// kcatGroup consumes topic t as a member of group with kcat's balanced
// consumer (-G) until the end of the partition, committing as it goes, and
// returns the values it printed.
func kcatGroup(t *testing.T, addr, group string) string {
	t.Helper()
	return kcat(t, addr, "", "-G", group, "-X", "auto.commit.interval.ms=100", "-X", "auto.offset.reset=earliest",
		"-e", "-q", "-f", "%s\n", "t")
}

// TestKafkaGroupsReset: .groups/ of a cluster mount lists the group kcat's
// -G consumer made, with its committed offset and lag (ListGroups,
// OffsetFetch, ListOffsets), kept current; a reset written to .groups/G
// (an offset, earliest, @T) is where `kcat -G G` resumes, exactly; while a
// kcat -G member is in the group the reset is EBUSY and changes nothing.
func TestKafkaGroupsReset(t *testing.T) {
	_, addr, d := kcatMount(t)
	d.sh("mkdir t && seq 1 10 >> t/0/log")
	time.Sleep(20 * time.Millisecond) // the second ten get later timestamps
	d.sh("seq 11 20 >> t/0/log")
	if got := kcatGroup(t, addr, "g"); got != seqLines(1, 20) {
		t.Fatalf("kcat -G g read %q", got)
	}
	desc := func() string { return d.sh("awk 'NR==2 {print $1, $2, $3, $4, $5, $6}' .groups/g") }
	waitFor(t, "the commit of kcat -G", func() bool { return desc() == "g t 0 20 20 0\n" }, desc)
	if got := d.sh("ls .groups"); got != "g\ng.jsonl\n" {
		t.Fatalf("ls .groups: %q", got)
	}
	d.sh("seq 21 25 >> t/0/log")
	if got := desc(); got != "g t 0 20 25 5\n" {
		t.Fatalf("after 5 more records: %q", got)
	}

	d.sh("echo 't 0 3' > .groups/g")
	if got := desc(); got != "g t 0 3 25 22\n" {
		t.Fatalf("after the reset to 3: %q", got)
	}
	if got := kcatGroup(t, addr, "g"); got != seqLines(4, 25) {
		t.Fatalf("kcat -G g after the reset to 3 read %q", got)
	}
	waitFor(t, "the commit after the reset", func() bool { return desc() == "g t 0 25 25 0\n" }, desc)

	var second struct {
		Timestamp int64 `json:"timestamp"`
	}
	if err := json.Unmarshal([]byte(d.sh("sed -n 11p t/0/log.jsonl")), &second); err != nil {
		t.Fatal(err)
	}
	d.sh("echo 't 0 @" + strconv.FormatInt(second.Timestamp, 10) + "' > .groups/g")
	if got := kcatGroup(t, addr, "g"); !strings.HasPrefix(got, "11\n") || !strings.HasSuffix(got, "25\n") {
		t.Fatalf("kcat -G g after the reset to @%d read %q", second.Timestamp, got)
	}
	d.sh("echo 't 0 earliest' > .groups/g")
	if got := kcatGroup(t, addr, "g"); got != seqLines(1, 25) {
		t.Fatalf("kcat -G g after the reset to earliest read %q", got)
	}

	// a member in the group: EBUSY, nothing changed
	ctx, cancel := context.WithCancel(context.Background())
	member := exec.CommandContext(ctx, testutil.Kcat(t), "-b", addr, "-G", "g", "-q", "t")
	if err := member.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = member.Wait() }()
	owned := func() string { return d.sh("awk 'NR==2 {print $7}' .groups/g") }
	waitFor(t, "kcat -G to join", func() bool { return strings.TrimSpace(owned()) != "-" }, owned)
	out, err := testutil.Sh(d.mnt, "echo 't 0 0' > .groups/g", 30*time.Second)
	if err == nil || !strings.Contains(err.Error()+out, "Device or resource busy") {
		t.Fatalf("reset while kcat -G is a member: %v %q, want EBUSY", err, out)
	}
	if got := desc(); got != "g t 0 25 25 0\n" {
		t.Fatalf("after the refused reset: %q", got)
	}
	d.stop()
}

func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// waitFor polls cond for up to 20 s, failing with what show returns.
func waitFor(t *testing.T, what string, cond func() bool, show func() string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %q", what, show())
		}
	}
}
