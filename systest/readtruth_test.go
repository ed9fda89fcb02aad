package systest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/record"
)

// readTruthFaults are the fault table's rows for what reads and loads
// must not trust: a segment renamed above its first batch, with a clean
// stop and without, and the internal topics of a broker directory with no
// stored configuration.
func readTruthFaults() []faultCase {
	renamed := func(clean bool) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			m := buildDataDir(t, dir)
			for _, suf := range []string{".log", ".index", ".timeindex"} {
				if err := os.Rename(tSeg(dir, 22, suf), tSeg(dir, 23, suf)); err != nil {
					t.Fatal(err)
				}
			}
			if !clean {
				unclean(t, dir)
			}
			seg := tSeg(dir, 23, ".log")
			before := testutil.ReadFile(t, seg)
			out, code := runPartfs(t, "check", dir)
			if code != 1 || !strings.Contains(out, seg+": at position 0") {
				t.Errorf("partfs check exit %d, want 1 naming %s at position 0:\n%s", code, seg, out)
			}
			d := startDaemon(t, dir, dir+".mnt")
			closedTopicServed(t, d, seg) // not opened (a recovery met it) or failing reads at position 0
			d.stop()
			if after := testutil.ReadFile(t, seg); !bytes.Equal(after, before) {
				t.Fatalf("the renamed segment was changed: %d bytes, had %d", len(after), len(before))
			}
			// named back, every record is served again
			for _, suf := range []string{".log", ".index", ".timeindex"} {
				if err := os.Rename(tSeg(dir, 23, suf), tSeg(dir, 22, suf)); err != nil {
					t.Fatal(err)
				}
			}
			d.restart()
			if got := readJSONLValues(t, d, "t"); strings.Join(got, ",") != strings.Join(m[tpKey("t", 0)], ",") {
				t.Errorf("named back: %d records served, want the %d written", len(got), len(m[tpKey("t", 0)]))
			}
			d.stop()
		}
	}
	return []faultCase{
		{name: "segment renamed above its first batch, clean stop: EIO, nothing cut", run: renamed(true)},
		{name: "segment renamed above its first batch, unclean stop: EIO, nothing cut", run: renamed(false)},
		{name: "broker directory without stored settings: internal topics compacted, offsets kept", run: zkEraInternalTopics},
	}
}

// zkEraInternalTopics mounts read-write a broker directory of the
// ZooKeeper era (its topic configurations are not in the directory)
// holding a week-old commit in __consumer_offsets and a week-old record in
// a plain topic: retention deletes the plain record, keeps the commit
// (cleanup.policy=compact), and .groups/ serves the group.
func zkEraInternalTopics(t *testing.T, dir string) {
	old := time.Now().Add(-8 * 24 * time.Hour).UnixMilli()
	key, value := internaltopic.OffsetCommitRecord("g", "plain", 0, 0, old)
	write := func(part string, r record.Record) {
		var enc record.Encoder
		seg, err := enc.AppendBatch(nil, 0, []record.Record{r}, record.BatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, part), 0o755); err != nil {
			t.Fatal(err)
		}
		testutil.WriteFile(t, filepath.Join(dir, part, "00000000000000000000.log"), seg)
	}
	write("__consumer_offsets-0", record.Record{Timestamp: old, Key: key, Value: value})
	write("plain-0", record.Record{Timestamp: old, Value: []byte("old")})
	d := startDaemon(t, dir, dir+".mnt", "--config", "log.retention.check.interval.ms=100")
	deadline := time.Now().Add(10 * time.Second)
	for statField(t, d, "plain/0", "log_start_offset") != 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if start := statField(t, d, "plain/0", "log_start_offset"); start != 1 {
		t.Fatalf("retention did not run on the plain topic: log start %d", start)
	}
	if start := statField(t, d, "__consumer_offsets/0", "log_start_offset"); start != 0 {
		t.Errorf("retention deleted committed offsets: __consumer_offsets log start %d", start)
	}
	stat := string(testutil.ReadFile(t, d.path("__consumer_offsets", "0", "stat")))
	if !strings.Contains(stat, "cleanup_policy: compact") {
		t.Errorf("__consumer_offsets stat:\n%s", stat)
	}
	if got := string(testutil.ReadFile(t, d.path(".groups", "g"))); !strings.Contains(got, "plain") {
		t.Errorf(".groups/g: %q", got)
	}
	d.stop()
}

// readJSONLValues is the values log.jsonl of topic/0 serves.
func readJSONLValues(t *testing.T, d *daemon, topic string) []string {
	t.Helper()
	raw, err := os.ReadFile(d.path(topic, "0", "log.jsonl"))
	if err != nil {
		t.Fatalf("read %s/0/log.jsonl: %v", topic, err)
	}
	var out []string
	for _, r := range jsonlRecs(t, string(raw)) {
		if r.Value == nil {
			t.Fatalf("%s/0/log.jsonl: a null value at offset %d", topic, r.Offset)
		}
		out = append(out, *r.Value)
	}
	return out
}
