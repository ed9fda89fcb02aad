package logstore

import (
	"testing"
	"time"

	"github.com/partfs/partfs/record"
)

// TestInternalTopicsKeepKafkasSettings opens a broker's directory of the
// ZooKeeper era (no stored configuration) holding week-old committed
// offsets and transaction states: both internal topics are compacted with
// Kafka's 100 MiB segments and retention deletes nothing of them, while an
// ordinary topic of the same age keeps the delete policy.
func TestInternalTopicsKeepKafkasSettings(t *testing.T) {
	c := newClock()
	old := c.Now().Add(-8 * 24 * time.Hour).UnixMilli()
	var enc record.Encoder
	seg, err := enc.AppendBatch(nil, 0, []record.Record{{Timestamp: old, Key: []byte("k"), Value: []byte("v")}}, record.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := writePartition("__consumer_offsets-0", map[string][]byte{"00000000000000000000.log": seg})
	for _, part := range []string{"__transaction_state-0", "plain-0"} {
		fs.MkdirAll("/data/"+part, 0o755)
		w, _ := fs.Create("/data/" + part + "/00000000000000000000.log")
		w.Write(seg)
		w.Close()
	}
	st := openTopics(t, "/data", testOptions(fs, c, nil))
	defer st.Close()
	for topic, policy := range map[string]string{"__consumer_offsets": "compact", "__transaction_state": "compact", "plain": "delete"} {
		kv, err := st.TopicConfig(topic)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range kv {
			got[p.Key] = p.Value
		}
		if got["cleanup.policy"] != policy {
			t.Errorf("%s: cleanup.policy %q, want %q", topic, got["cleanup.policy"], policy)
		}
		if policy == "compact" && got["segment.bytes"] != "104857600" {
			t.Errorf("%s: segment.bytes %q, want Kafka's 104857600", topic, got["segment.bytes"])
		}
		l, err := st.Log(topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		n, err := l.ApplyRetention()
		if want := map[string]int{"compact": 0, "delete": 1}[policy]; n != want || err != nil {
			t.Errorf("%s: retention deleted %d segments (%v), want %d", topic, n, err, want)
		}
	}
}
