package compact

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
	"github.com/partfs/partfs/record"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var codecs = []record.Codec{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd}

// kv is a record as tests write and expect it; value "<nil>" is a tombstone.
type kv struct {
	off   int64
	ts    int64
	key   string // "" = null key
	value string
}

func toRecords(in []kv) []record.Record {
	recs := make([]record.Record, len(in))
	for i, r := range in {
		recs[i] = record.Record{Timestamp: r.ts}
		if r.key != "" {
			recs[i].Key = []byte(r.key)
		}
		if r.value != "<nil>" {
			recs[i].Value = []byte(r.value)
		}
		if i == 1 {
			recs[i].Headers = []record.Header{{Key: "h", Value: []byte("x")}, {Key: "n"}}
		}
	}
	return recs
}

func encodeBatch(t testing.TB, base int64, in []kv, opt record.BatchOptions) []byte {
	t.Helper()
	var e record.Encoder
	b, err := e.AppendBatch(nil, base, toRecords(in), opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeAll scans raw and returns its headers and records.
func decodeAll(t testing.TB, raw []byte) ([]record.BatchHeader, []kv) {
	t.Helper()
	var (
		hs  []record.BatchHeader
		out []kv
		dec record.Decoder
	)
	s := record.NewBytesScanner(raw, "out")
	for s.Next() {
		b := s.Batch()
		hs = append(hs, b.Header)
		err := dec.Records(b, func(r *record.Record) bool {
			k := kv{off: r.Offset, ts: r.Timestamp, key: string(r.Key), value: string(r.Value)}
			if r.Value == nil {
				k.value = "<nil>"
			}
			out = append(out, k)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	return hs, out
}

func mapOf(t testing.TB, in []kv) *OffsetMap {
	t.Helper()
	m, err := NewOffsetMap(24*1024, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in {
		if r.key != "" {
			m.Put([]byte(r.key), r.off)
		}
	}
	return m
}

func runFilter(t testing.TB, f *filter, raw []byte) []byte {
	t.Helper()
	var out []byte
	s := record.NewBytesScanner(raw, "in")
	for s.Next() {
		var err error
		if out, err = f.batch(out, s.Batch()); err != nil {
			t.Fatal(err)
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	return out
}

func newFilter(m *OffsetMap, now int64) *filter {
	return &filter{rule: retainRule{offsets: m, nowMs: now}, deleteRetentionMs: 1000, stats: &Stats{}, producers: producers{}}
}

// lastOf makes raw's batch its producer's last (with timestamp ts) in f's
// producer state.
func lastOf(t *testing.T, f *filter, raw []byte, ts int64) *filter {
	t.Helper()
	h, err := record.ParseHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	f.producers.observe(&h)
	f.producers[h.ProducerID].ts = ts
	return f
}

func TestFilterKeepsLatestWithOffsetsAndCodec(t *testing.T) {
	in := []kv{{10, 100, "a", "a1"}, {11, 105, "b", "b1"}, {12, 103, "a", "a2"}, {13, 104, "", "nokey"}, {14, 108, "c", "c1"}}
	want := []kv{{11, 105, "b", "b1"}, {12, 103, "a", "a2"}, {14, 108, "c", "c1"}}
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			opt := record.BatchOptions{Codec: codec, KeepProducer: true, ProducerID: 7, ProducerEpoch: 2, BaseSequence: 40, PartitionLeaderEpoch: 3}
			raw := encodeBatch(t, 10, in, opt)
			m := mapOf(t, in)
			m.Put([]byte("z"), 14) // the map covers offset 14, so the null key at 13 goes
			f := newFilter(m, 0)
			out := runFilter(t, f, raw)
			hs, got := decodeAll(t, out)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("records %v, want %v", got, want)
			}
			h := hs[0]
			if len(hs) != 1 || h.BaseOffset != 10 || h.LastOffset() != 14 || h.NumRecords != 3 || h.Codec() != codec ||
				h.ProducerID != 7 || h.ProducerEpoch != 2 || h.BaseSequence != 40 || h.PartitionLeaderEpoch != 3 ||
				h.BaseTimestamp != 105 || h.MaxTimestamp != 108 {
				t.Fatalf("header %+v", h)
			}
			if f.stats.RecordsRemoved != 2 || f.stats.BatchesRebuilt != 1 {
				t.Fatalf("stats %+v", *f.stats)
			}
			checkWithFranz(t, out, []int64{11, 12, 14})
		})
	}
}

// checkWithFranz decodes a single batch with franz-go (an independent
// decoder) and compares the record offsets.
func checkWithFranz(t *testing.T, raw []byte, offsets []int64) {
	t.Helper()
	var b kmsg.RecordBatch
	if err := b.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	recs := b.Records
	if codec := kgo.CompressionCodecType(b.Attributes & 0x07); codec != 0 {
		var err error
		if recs, err = kgo.DefaultDecompressor().Decompress(b.Records, codec); err != nil {
			t.Fatalf("franz-go decompress: %v", err)
		}
	}
	for i := int32(0); i < b.NumRecords; i++ {
		n, w := binary.Varint(recs)
		var r kmsg.Record
		if err := r.ReadFrom(recs[:w+int(n)]); err != nil {
			t.Fatal(err)
		}
		recs = recs[w+int(n):]
		if got := b.FirstOffset + int64(r.OffsetDelta); got != offsets[i] {
			t.Fatalf("franz-go record %d at offset %d, want %d", i, got, offsets[i])
		}
	}
}

func TestFilterCopiesUnchangedBatches(t *testing.T) {
	in := []kv{{0, 1, "a", "1"}, {1, 2, "b", "2"}}
	raw := append(encodeBatch(t, 0, in, record.BatchOptions{Codec: record.Gzip}), encodeBatch(t, 2, []kv{{2, 3, "c", "3"}}, record.BatchOptions{Control: true})...)
	m := mapOf(t, in)
	f := newFilter(m, 0)
	out := runFilter(t, f, raw)
	if !bytes.Equal(out, raw) {
		t.Fatal("unchanged batches were not copied byte for byte")
	}
	if f.stats.BatchesCopied != 2 || f.stats.RecordsRemoved != 0 {
		t.Fatalf("stats %+v", *f.stats)
	}
}

func TestTombstoneDeleteHorizon(t *testing.T) {
	in := []kv{{0, 50, "a", "1"}, {1, 60, "a", "<nil>"}, {2, 70, "b", "2"}}
	raw := encodeBatch(t, 0, in, record.BatchOptions{Codec: record.LZ4})
	m := mapOf(t, in)

	// First cleaning at 1000: the tombstone stays and gets horizon 1000+1000.
	out := runFilter(t, newFilter(m, 1000), raw)
	hs, got := decodeAll(t, out)
	if horizon, ok := hs[0].DeleteHorizon(); !ok || horizon != 2000 || hs[0].BaseTimestamp != 2000 {
		t.Fatalf("no horizon 2000: %+v", hs[0])
	}
	if want := []kv{{1, 60, "a", "<nil>"}, {2, 70, "b", "2"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v (timestamps kept under the horizon)", got, want)
	}

	// Before the horizon: nothing changes, the batch is copied.
	again := runFilter(t, newFilter(m, 1999), out)
	if !bytes.Equal(again, out) {
		t.Fatal("batch with a horizon not yet passed was rewritten")
	}

	// At the horizon the tombstone goes; the horizon stays on the batch.
	late := runFilter(t, newFilter(m, 2000), out)
	hs, got = decodeAll(t, late)
	if want := []kv{{2, 70, "b", "2"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the horizon: %v, want %v", got, want)
	}
	if hs[0].BaseOffset != 0 || hs[0].LastOffset() != 2 {
		t.Fatalf("batch offsets %d..%d, want 0..2", hs[0].BaseOffset, hs[0].LastOffset())
	}
}

// TestFilterDropsOrEmptiesDeadBatches: a batch that loses every record
// goes, except the last batch of an active producer, which stays as an
// empty header (Kafka's RETAIN_EMPTY).
func TestFilterDropsOrEmptiesDeadBatches(t *testing.T) {
	old := []kv{{0, 1, "a", "1"}, {1, 2, "b", "2"}}
	newer := []kv{{2, 3, "a", "3"}, {3, 4, "b", "4"}}
	m := mapOf(t, append(append([]kv{}, old...), newer...))

	plain := encodeBatch(t, 0, old, record.BatchOptions{})
	if out := runFilter(t, newFilter(m, 0), plain); len(out) != 0 {
		t.Fatalf("dead batch without producer left %d bytes", len(out))
	}

	idem := encodeBatch(t, 0, old, record.BatchOptions{KeepProducer: true, ProducerID: 9, ProducerEpoch: 1, BaseSequence: 5, PartitionLeaderEpoch: -1, Codec: record.Zstd})
	if out := runFilter(t, newFilter(m, 0), idem); len(out) != 0 {
		t.Fatalf("emptied batch that is not its producer's last left %d bytes", len(out))
	}
	if out := runFilter(t, lastOf(t, newFilter(m, DefaultProducerIDExpirationMs), idem, 0), idem); len(out) != 0 {
		t.Fatalf("emptied last batch of an expired producer left %d bytes", len(out))
	}
	out := runFilter(t, lastOf(t, newFilter(m, 0), idem, 0), idem)
	hs, got := decodeAll(t, out)
	if len(got) != 0 || len(hs) != 1 || len(out) != record.BatchHeaderSize {
		t.Fatalf("producer batch: %d bytes, %d batches, %d records; want one empty header", len(out), len(hs), len(got))
	}
	if h := hs[0]; h.BaseOffset != 0 || h.LastOffset() != 1 || h.ProducerID != 9 || h.BaseSequence != 5 || h.Codec() != record.None || h.MaxTimestamp != 2 {
		t.Fatalf("empty batch header %+v", h)
	}
}

func TestFilterLegacy(t *testing.T) {
	raw, err := os.ReadFile(testfixtures.Path(t, "kafka-python/record_batch_data_v1_all.bin"))
	if err != nil {
		t.Fatal(err)
	}
	m := mapOf(t, []kv{{2, 0, "k", "v"}}) // covers offsets <= 2: their null keys go
	out := runFilter(t, newFilter(m, 0), raw)
	_, got := decodeAll(t, out)
	if len(got) != 1 || got[0].off != 3 {
		t.Fatalf("legacy records left %v, want only offset 3", got)
	}
}
