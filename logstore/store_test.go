package logstore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

func TestTopicsAndConfig(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st := openTopics(t, "/data", testOptions(fs, c, map[string]string{"retention.ms": "1000"}))
	for _, bad := range []string{"", ".", "..", "a/b", "sp ace", strings.Repeat("x", 250)} {
		if err := st.CreateTopic(bad); !errors.Is(err, partlog.ErrInvalid) {
			t.Fatalf("CreateTopic(%q) = %v", bad, err)
		}
	}
	if err := st.CreateTopic("orders.v1-x_y"); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTopic("orders.v1-x_y"); !errors.Is(err, partlog.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	if err := st.AddPartition("orders.v1-x_y", 2); !errors.Is(err, partlog.ErrInvalid) {
		t.Fatalf("AddPartition(2): %v", err)
	}
	if err := st.AddPartition("orders.v1-x_y", 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Partitions("orders.v1-x_y"); n != 2 {
		t.Fatalf("%d partitions", n)
	}
	if _, err := st.Partition("nope", 0); !errors.Is(err, partlog.ErrNotFound) {
		t.Fatal(err)
	}
	for _, f := range []string{"/data/orders.v1-x_y-1/partition.metadata", "/data/orders.v1-x_y-1/leader-epoch-checkpoint",
		"/data/meta.properties", "/data/orders.v1-x_y-1/00000000000000000000.log"} {
		if !exists(fs, f) {
			t.Fatalf("%s missing", f)
		}
	}
	id0, _ := checkpoint.ReadPartitionMetadata(fs, "/data/orders.v1-x_y-0/partition.metadata")
	id1, _ := checkpoint.ReadPartitionMetadata(fs, "/data/orders.v1-x_y-1/partition.metadata")
	if id0 != id1 || id0 == [16]byte{} {
		t.Fatal("partitions of a topic must share a topic id")
	}
	kv, _ := st.TopicConfig("orders.v1-x_y")
	got := map[string]string{}
	for _, p := range kv {
		got[p.Key] = p.Value
	}
	if got["retention.ms"] != "1000" || got["segment.bytes"] != "1073741824" || len(kv) < 18 {
		t.Fatalf("config %v", got)
	}
	bad := []partlog.KV{{Key: "segment.bytes", Value: "5000"}, {Key: "no.such.key", Value: "1"}}
	if err := st.SetTopicConfig("orders.v1-x_y", bad); !errors.Is(err, partlog.ErrInvalid) {
		t.Fatalf("bad config: %v", err)
	}
	if err := st.SetTopicConfig("orders.v1-x_y", []partlog.KV{{Key: "cleanup.policy", Value: "compact"}}); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("orders.v1-x_y", 1)
	if !l.Config().Compacted() || l.Config().SegmentBytes != 1073741824 {
		t.Fatalf("config not applied: %+v", l.Config())
	}
	st.Close()
	// overrides persist; mount defaults do not
	st = openTopics(t, "/data", testOptions(fs, c, nil))
	defer st.Close()
	l, _ = st.Log("orders.v1-x_y", 0)
	if cfg := l.Config(); !cfg.Compacted() || cfg.RetentionMs == 1000 {
		t.Fatalf("after reopen: %+v", cfg)
	}
}

func TestReadOnlyChangesNothing(t *testing.T) {
	cfg := map[string]string{"segment.bytes": "2000", "index.interval.bytes": "250"}
	fs, c := buildLog(t, 40, cfg)
	fs.Remove("/data/.kafka_cleanshutdown")
	fs.Remove("/data/recovery-point-offset-checkpoint")
	mutate(t, fs, "/data/t-0/00000000000000000033.log", func(b []byte) []byte { return b[:len(b)-50] })
	fs.Remove("/data/t-0/00000000000000000011.index")
	before := snapshotFS(t, fs, "/data")
	opt := testOptions(fs, c, cfg)
	opt.ReadOnly = true
	st, err := Open("/data", opt)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	if l.EndOffset() != 39 || len(readLog(t, l, 0)) != 39 {
		t.Fatalf("read-only recovery: end %d", l.EndOffset())
	}
	if got := readN(t, l, 17, 1); got[0].off != 17 {
		t.Fatalf("lookup through an in-memory index: %v", got)
	}
	if _, err := l.Append(recs(1, "x", 0)); !errors.Is(err, partlog.ErrReadOnly) {
		t.Fatalf("append on read-only: %v", err)
	}
	if err := st.CreateTopic("u"); !errors.Is(err, partlog.ErrReadOnly) {
		t.Fatalf("create on read-only: %v", err)
	}
	st.Close()
	if after := snapshotFS(t, fs, "/data"); after != before {
		t.Fatalf("read-only open changed the data directory:\n%s\n---\n%s", before, after)
	}
}

// snapshotFS lists names, sizes and content hashes under dir.
func snapshotFS(t *testing.T, fs vfs.FS, dir string) string {
	var b strings.Builder
	infos, _ := fs.ReadDir(dir)
	for _, fi := range infos {
		if fi.IsDir() {
			fmt.Fprintf(&b, "%s/\n%s", fi.Name(), snapshotFS(t, fs, dir+"/"+fi.Name()))
			continue
		}
		data := readFileBytes(t, fs, dir+"/"+fi.Name())
		fmt.Fprintf(&b, "%s %d %x\n", fi.Name(), len(data), sha256.Sum256(data))
	}
	return b.String()
}

func TestLeftovers(t *testing.T) {
	cfg := map[string]string{"segment.bytes": "2000", "index.interval.bytes": "250"}
	fs, c := buildLog(t, 40, cfg)
	write := func(name string, data []byte) {
		f, err := fs.Create("/data/t-0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data)
		f.Close()
	}
	seg0 := readFileBytes(t, fs, "/data/t-0/00000000000000000000.log")
	write("00000000000000000000.log.deleted", seg0)
	write("00000000000000000022.log.cleaned", []byte("partial"))
	write("00000000000000000022.index.cleaned", make([]byte, 16))
	write("00000000000000000030.log.swap", seg0) // at/above the smallest .cleaned: an incomplete split
	write("00000000000000000000.snapshot.checkpoint.deleted", []byte("kraft"))
	fs.Remove("/data/.kafka_cleanshutdown")
	st, l := openTest(t, fs, c, cfg)
	defer st.Close()
	if l.EndOffset() != 40 || len(readLog(t, l, 0)) != 40 {
		t.Fatalf("end %d", l.EndOffset())
	}
	infos, _ := fs.ReadDir("/data/t-0")
	for _, fi := range infos {
		n := fi.Name()
		if (strings.HasSuffix(n, ".deleted") && !strings.HasSuffix(n, ".checkpoint.deleted")) ||
			strings.HasSuffix(n, ".cleaned") || strings.HasSuffix(n, ".swap") {
			t.Fatalf("leftover %s not resolved", n)
		}
	}
	if !exists(fs, "/data/t-0/00000000000000000000.snapshot.checkpoint.deleted") {
		t.Fatal(".checkpoint.deleted must be left alone")
	}
}

// TestAddPartitionRollsBack: a partition whose creation fails leaves no
// directory behind, so the retry succeeds instead of answering EEXIST.
func TestAddPartitionRollsBack(t *testing.T) {
	base, c := vfs.NewCrashFS(), newClock()
	inj := &vfs.NthInjector{Op: vfs.OpCreate, N: 1, Err: syscall.EMFILE, Filter: "t-1/partition.metadata"}
	st, _ := openAt(t, "/data", testOptions(vfs.NewErrorFS(base, inj), c, nil))
	defer st.Close()
	if err := st.AddPartition("t", 1); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("AddPartition with the create failing: %v, want EMFILE", err)
	}
	if _, err := base.Stat("/data/t-1"); !isNotExist(err) {
		t.Fatalf("t-1 left behind by the failed creation: %v", err)
	}
	if err := st.AddPartition("t", 1); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if _, err := st.Log("t", 1); err != nil {
		t.Fatal(err)
	}
}

// TestAddPartitionToPre28Topic: a topic whose partitions have no
// partition.metadata (written before Kafka 2.8) gets a topic id when a
// partition is added, and keeps it across a reopen.
func TestAddPartitionToPre28Topic(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, _ := openTest(t, fs, c, nil)
	st.Close()
	if err := fs.Remove("/data/t-0/partition.metadata"); err != nil {
		t.Fatal(err)
	}
	st, _ = openTest(t, fs, c, nil)
	if err := st.AddPartition("t", 1); err != nil {
		t.Fatalf("AddPartition: %v", err)
	}
	id := st.topics["t"].id
	st.Close()
	st, _ = openTest(t, fs, c, nil)
	defer st.Close()
	if n, err := st.Partitions("t"); n != 2 || err != nil {
		t.Fatalf("partitions %d %v", n, err)
	}
	if st.topics["t"].id != id {
		t.Errorf("topic id changed across a reopen")
	}
	if err := st.AddPartition("t", 2); err != nil || !errors.Is(st.AddPartition("t", 2), partlog.ErrExists) {
		t.Fatalf("AddPartition 2: %v", err)
	}
}
