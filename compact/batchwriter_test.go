package compact

import (
	"bytes"
	"testing"

	"github.com/partfs/partfs/record"
)

// xerialMagic starts snappy-java's stream framing, which Kafka's Java
// client writes for snappy.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// TestRebuiltBatchKeepsIdentity: a rebuilt batch keeps the original's
// timestamp type, transactional flag, leader epoch, producer fields, codec
// and offsets; snappy is xerial-framed; franz-go reads the offsets.
func TestRebuiltBatchKeepsIdentity(t *testing.T) {
	in := []kv{{20, 1, "a", "old"}, {21, 2, "b", "b1"}, {22, 3, "a", "new"}, {23, 4, "c", "c1"}}
	opt := record.BatchOptions{Codec: record.Snappy, LogAppendTime: true, LogAppendTimeMs: 500, Transactional: true,
		KeepProducer: true, ProducerID: 3, ProducerEpoch: 1, BaseSequence: 8, PartitionLeaderEpoch: 6}
	raw := encodeBatch(t, 20, in, opt)
	out := runFilter(t, newFilter(mapOf(t, in), 0), raw)
	hs, got := decodeAll(t, out)
	if want := []kv{{21, 500, "b", "b1"}, {22, 500, "a", "new"}, {23, 500, "c", "c1"}}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("records %v, want %v", got, want)
	}
	h := hs[0]
	if !h.LogAppendTime() || !h.IsTransactional() || h.IsControl() || h.MaxTimestamp != 500 || h.Codec() != record.Snappy ||
		h.BaseOffset != 20 || h.LastOffset() != 23 || h.ProducerID != 3 || h.ProducerEpoch != 1 || h.BaseSequence != 8 || h.PartitionLeaderEpoch != 6 {
		t.Fatalf("header %+v", h)
	}
	if !bytes.HasPrefix(out[record.BatchHeaderSize:], xerialMagic) {
		t.Fatalf("snappy records area is not xerial-framed: % x", out[record.BatchHeaderSize:][:8])
	}
	checkWithFranz(t, out, []int64{21, 22, 23})
}

// TestEmptyBatchAsKafka: the last batch of a producer that loses every record becomes
// Kafka's writeEmptyHeader batch: no records, uncompressed, baseTimestamp
// -1, maxTimestamp and flags of the original, no delete horizon.
func TestEmptyBatchAsKafka(t *testing.T) {
	old := []kv{{0, 7, "a", "1"}, {1, 9, "a", "<nil>"}}
	m := mapOf(t, append(append([]kv{}, old...), kv{2, 10, "a", "2"}))
	opt := record.BatchOptions{Codec: record.Gzip, Transactional: true, DeleteHorizonMs: 100,
		KeepProducer: true, ProducerID: 4, ProducerEpoch: 0, BaseSequence: 0, PartitionLeaderEpoch: 2}
	raw := encodeBatch(t, 0, old, opt)
	out := runFilter(t, lastOf(t, newFilter(m, 0), raw, 0), raw)
	hs, got := decodeAll(t, out)
	if len(hs) != 1 || len(got) != 0 || len(out) != record.BatchHeaderSize {
		t.Fatalf("%d batches, %d records, %d bytes", len(hs), len(got), len(out))
	}
	h := hs[0]
	if h.Attributes != 0x10 || h.BaseTimestamp != -1 || h.MaxTimestamp != 9 || h.LastOffset() != 1 ||
		h.ProducerID != 4 || h.PartitionLeaderEpoch != 2 || h.NumRecords != 0 {
		t.Fatalf("header %+v", h)
	}
}
