package logstore

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// metaValue frames a flexible-version metadata record body.
func metaValue(apiKey int, body []byte) []byte {
	b := binary.AppendUvarint(nil, 1)
	b = binary.AppendUvarint(b, uint64(apiKey))
	b = binary.AppendUvarint(b, 0)
	return append(b, body...)
}

func compactString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s)+1)), s...)
}

func topicRecord(name string, id byte) []byte {
	b := compactString(nil, name)
	b = append(b, id, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
	return metaValue(2, append(b, 0))
}

func configRecord(topic, key, value string) []byte {
	b := compactString([]byte{2}, topic)
	b = compactString(b, key)
	b = compactString(b, value)
	return metaValue(4, append(b, 0))
}

// writeKRaftDir writes a KRaft broker's data directory: a metadata log
// with orders (retention.ms=-1, then segment.bytes) and __consumer_offsets
// (cleanup.policy=compact), and old data in orders-0.
func writeKRaftDir(t *testing.T, dir string) {
	var enc record.Encoder
	var meta []byte
	for i, v := range [][]byte{
		topicRecord("orders", 1), configRecord("orders", "retention.ms", "-1"),
		topicRecord("__consumer_offsets", 2), configRecord("__consumer_offsets", "cleanup.policy", "compact"),
		configRecord("orders", "segment.bytes", "1048576"),
	} {
		var err error
		if meta, err = enc.AppendBatch(meta, int64(i), []record.Record{{Timestamp: 1000, Value: v}}, record.BatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	old, err := enc.AppendBatch(nil, 0, []record.Record{{Timestamp: 1000, Value: []byte("from 1970")}}, record.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recent, err := enc.AppendBatch(nil, 1, []record.Record{{Timestamp: time.Now().UnixMilli(), Value: []byte("now")}}, record.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"__cluster_metadata-0", "orders-0", "__consumer_offsets-0"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WriteFile(t, filepath.Join(dir, "__cluster_metadata-0", "00000000000000000000.log"), meta)
	testutil.WriteFile(t, filepath.Join(dir, "__cluster_metadata-0", "leader-epoch-checkpoint"), []byte("0\n1\n0 0\n"))
	testutil.WriteFile(t, filepath.Join(dir, "orders-0", "00000000000000000000.log"), old)
	testutil.WriteFile(t, filepath.Join(dir, "orders-0", "00000000000000000001.log"), recent)
	testutil.WriteFile(t, filepath.Join(dir, "__consumer_offsets-0", "00000000000000000000.log"), nil)
}

func treeHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func configValue(t *testing.T, st *Store, topic, key string) string {
	t.Helper()
	kvs, err := st.TopicConfig(topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// TestKRaftTopicConfigs: a KRaft broker's directory takes each topic's
// configuration from its metadata log's latest ConfigRecords; a value set
// through the mount wins and only it is stored in partfs-topics.json; the
// metadata log is never written and the root checkpoints have no line for
// it; retention.ms=-1 keeps 1970's record.
func TestKRaftTopicConfigs(t *testing.T) {
	dir := t.TempDir()
	writeKRaftDir(t, dir)
	metaDir := filepath.Join(dir, "__cluster_metadata-0")
	before := treeHashes(t, metaDir)
	st, err := Open(dir, Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][3]string{
		{"orders", "retention.ms", "-1"}, {"orders", "segment.bytes", "1048576"},
		{"__consumer_offsets", "cleanup.policy", "compact"}, {"orders", "cleanup.policy", "delete"},
	} {
		if got := configValue(t, st, c[0], c[1]); got != c[2] {
			t.Fatalf("%s %s=%s, want %s", c[0], c[1], got, c[2])
		}
	}
	if err := st.SetTopicConfig("orders", []partlog.KV{{Key: "segment.bytes", Value: "2097152"}}); err != nil {
		t.Fatal(err)
	}
	if got := configValue(t, st, "orders", "segment.bytes"); got != "2097152" {
		t.Fatalf("mount's segment.bytes %s", got)
	}
	if err := st.RunMaintenance(true, false); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("orders", 0)
	if l.StartOffset() != 0 || l.EndOffset() != 2 {
		t.Fatalf("orders [%d, %d): retention.ms=-1 not kept", l.StartOffset(), l.EndOffset())
	}
	meta, _ := st.Log(metadataTopic, 0)
	if _, err := meta.Append([]record.Record{{Value: []byte("x")}}); err == nil {
		t.Fatal("the metadata log took an append")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	after := treeHashes(t, metaDir)
	if len(after) != len(before) {
		t.Fatalf("metadata log directory: %d files, was %d: %v", len(after), len(before), after)
	}
	for name, h := range before {
		if after[name] != h {
			t.Fatalf("%s changed", name)
		}
	}
	stored, err := os.ReadFile(filepath.Join(dir, TopicsFile))
	if err != nil || !strings.Contains(string(stored), `"segment.bytes": "2097152"`) || strings.Contains(string(stored), "retention.ms") {
		t.Fatalf("partfs-topics.json: %s %v", stored, err)
	}
	for _, f := range []string{kafkaname.RecoveryPointFile, kafkaname.ReplicationFile, kafkaname.LogStartOffsetFile, kafkaname.CleanerOffsetFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || strings.Contains(string(b), metadataTopic) {
			t.Fatalf("%s: %q %v", f, b, err)
		}
	}
	st, err = Open(dir, Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := configValue(t, st, "orders", "segment.bytes"); got != "2097152" {
		t.Fatalf("after reopening, segment.bytes %s", got)
	}
	if got := configValue(t, st, "orders", "retention.ms"); got != "-1" {
		t.Fatalf("after reopening, retention.ms %s", got)
	}
}

// metaBatches encodes metadata record values as one batch each from base.
func metaBatches(t *testing.T, base int64, values ...[]byte) []byte {
	t.Helper()
	var enc record.Encoder
	var out []byte
	for i, v := range values {
		var err error
		if out, err = enc.AppendBatch(out, base+int64(i), []record.Record{{Timestamp: 1000, Value: v}}, record.BatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestKRaftSnapshotConfigs: the newest snapshot holds what the log no
// longer has; the log's records after it apply on top. A log that starts
// past offset 0 with no snapshot leaves every topic unopened (a missing
// retention.ms=-1 would delete data), with nothing deleted.
func TestKRaftSnapshotConfigs(t *testing.T) {
	for _, withSnapshot := range []bool{true, false} {
		dir := t.TempDir()
		meta := filepath.Join(dir, "__cluster_metadata-0")
		for _, d := range []string{meta, filepath.Join(dir, "orders-0")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if withSnapshot {
			testutil.WriteFile(t, filepath.Join(meta, "00000000000000000002-0000000001.checkpoint"),
				metaBatches(t, 0, topicRecord("orders", 1), configRecord("orders", "retention.ms", "-1")))
			testutil.WriteFile(t, filepath.Join(meta, "00000000000000000001-0000000001.checkpoint"), []byte("older, never read"))
		}
		testutil.WriteFile(t, filepath.Join(meta, "00000000000000000002.log"),
			metaBatches(t, 2, configRecord("orders", "segment.bytes", "1048576")))
		old := metaBatches(t, 0, []byte("from 1970"))
		testutil.WriteFile(t, filepath.Join(dir, "orders-0", "00000000000000000000.log"), old)
		st, err := Open(dir, Options{NoBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		if withSnapshot {
			if got := configValue(t, st, "orders", "retention.ms") + " " + configValue(t, st, "orders", "segment.bytes"); got != "-1 1048576" {
				t.Fatalf("retention.ms and segment.bytes: %s", got)
			}
		} else if _, err := st.Partition("orders", 0); err == nil {
			l, _ := st.Log("orders", 0)
			t.Fatalf("orders opened without its configuration (log [%d, %d))", l.StartOffset(), l.EndOffset())
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "orders-0", "00000000000000000000.log")); err != nil || string(b) != string(old) {
			t.Fatalf("orders-0 changed: %v", err)
		}
	}
}
