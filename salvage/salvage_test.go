package salvage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/inspect"
	"github.com/partfs/partfs/record"
)

// TestSalvageSkipsACorruptBatch: of four batches the second is corrupt;
// recovery would keep one, salvage keeps three, reports the region with
// the offset lost, and the copy passes check.
func TestSalvageSkipsACorruptBatch(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	var enc record.Encoder
	var seg []byte
	var starts []int
	for i := range 4 {
		starts = append(starts, len(seg))
		var err error
		seg, err = enc.AppendBatch(seg, int64(i), []record.Record{{Timestamp: 1000, Value: []byte(strings.Repeat("v", 50))}}, record.BatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	seg[starts[1]+70] ^= 0xff // a value byte of offset 1: CRC mismatch
	if err := os.MkdirAll(filepath.Join(src, "t-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "t-0", "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	res, err := Run(src, dst, Options{Report: &report})
	if err != nil {
		t.Fatal(err)
	}
	if res.Batches != 3 || res.Records != 3 || len(res.Skips) != 1 {
		t.Fatalf("%+v", res)
	}
	sk := res.Skips[0]
	if sk.From != int64(starts[1]) || sk.To != int64(starts[2]) || sk.FirstLost != 1 || sk.NextKept != 2 {
		t.Fatalf("skip %+v, want [%d, %d) offsets 1-1", sk, starts[1], starts[2])
	}
	if !strings.Contains(report.String(), "offsets 1-1 lost") || !strings.Contains(report.String(), "CRC mismatch") {
		t.Fatalf("report %q", report.String())
	}
	var out bytes.Buffer
	if damaged, err := inspect.CheckProgress(&out, dst, nil); err != nil || damaged {
		t.Fatalf("check of the copy: %v %v\n%s", damaged, err, out.String())
	}
	if _, err := Run(src, dst, Options{}); err == nil {
		t.Fatal("salvage into a non-empty directory")
	}
}

// TestSalvagePicksThePartitionsTheStoreOpens: salvage's rule for partition
// directories is the store's (kafkaname.ParsePartitionDir), so a name whose
// topic Kafka refuses, or whose number is not canonical, is no partition.
func TestSalvagePicksThePartitionsTheStoreOpens(t *testing.T) {
	for name, want := range map[string]bool{"t-0": true, "a.b-12": true, "a b-0": false, "t-01": false, "t-0.x-delete": false} {
		if got := isPartitionDir(name); got != want {
			t.Errorf("isPartitionDir(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSalvageReportsASymlinkedSegment: a segment name that is a symbolic
// link is not followed and is reported as a skipped region with the
// offsets it held lost up to the next kept batch.
func TestSalvageReportsASymlinkedSegment(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	var enc record.Encoder
	part := filepath.Join(src, "t-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, base := range []int64{0, 5} {
		seg, err := enc.AppendBatch(nil, base, []record.Record{{Timestamp: 1000, Value: []byte("v")}}, record.BatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(part, fmt.Sprintf("%020d.log", base))
		if base == 0 {
			outside := filepath.Join(t.TempDir(), "elsewhere.log")
			if err := os.WriteFile(outside, seg, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(name, seg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var report bytes.Buffer
	res, err := Run(src, dst, Options{Report: &report})
	if err != nil {
		t.Fatal(err)
	}
	if res.Batches != 1 || len(res.Skips) != 1 || res.Skips[0].FirstLost != 0 || res.Skips[0].NextKept != 5 {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(report.String(), "not followed") || !strings.Contains(report.String(), "offsets 0-4 lost") {
		t.Fatalf("report %q", report.String())
	}
}
