package record

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// gapped returns sampleRecords at offsets 10, 13, 14, 20 and 31 (a cleaned
// batch based at 10 whose last offset was 35).
func gapped() []Record {
	recs := sampleRecords()
	for i, off := range []int64{10, 13, 14, 20, 31} {
		recs[i].Offset = off
	}
	return recs
}

// cleanerOpt is what the cleaner passes for a rebuilt producer batch.
func cleanerOpt(c Codec) BatchOptions {
	return BatchOptions{Codec: c, KeepOffsets: true, LastOffsetDelta: 25, KeepProducer: true,
		ProducerID: 77, ProducerEpoch: 4, BaseSequence: 1000, PartitionLeaderEpoch: 9}
}

// TestKeepOffsetsReadByFranz: a batch with gaps in its offset deltas, in
// every codec, is read by franz-go's consumer path (CRC checked) and by
// our decoder with the offsets, timestamps and header fields kept.
func TestKeepOffsetsReadByFranz(t *testing.T) {
	in := gapped()
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			var e Encoder
			raw, err := e.AppendBatch(nil, 10, in, cleanerOpt(c))
			if err != nil {
				t.Fatal(err)
			}
			got := franzDecode(t, raw)
			if len(got) != len(in) {
				t.Fatalf("franz-go read %d records, want %d", len(got), len(in))
			}
			for i, r := range got {
				if msg := sameRecord(fromFranz(r), in[i]); msg != "" {
					t.Errorf("franz-go record %d: %s", i, msg)
				}
			}
			ours := decodeOne(t, raw)
			for i := range ours {
				if msg := sameRecord(ours[i], in[i]); msg != "" {
					t.Errorf("our record %d: %s", i, msg)
				}
			}
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(raw); err != nil {
				t.Fatal(err)
			}
			if kb.FirstOffset != 10 || kb.LastOffsetDelta != 25 || kb.NumRecords != 5 || kb.ProducerID != 77 ||
				kb.ProducerEpoch != 4 || kb.FirstSequence != 1000 || kb.PartitionLeaderEpoch != 9 || kb.Attributes != int16(c) ||
				kb.FirstTimestamp != in[0].Timestamp || kb.MaxTimestamp != in[4].Timestamp {
				t.Errorf("header as kmsg reads it: %+v", kb)
			}
		})
	}
}

// TestKeepOffsetsDeleteHorizonReadByFranz: a gapped batch with a delete
// horizon (baseTimestamp = horizon, deltas relative to it) reads back with
// the records' own timestamps, and the default last delta is the last
// record's.
func TestKeepOffsetsDeleteHorizonReadByFranz(t *testing.T) {
	in := gapped()
	var e Encoder
	raw, err := e.AppendBatch(nil, 10, in, BatchOptions{Codec: Snappy, KeepOffsets: true, DeleteHorizonMs: 1900000000000})
	if err != nil {
		t.Fatal(err)
	}
	got := franzDecode(t, raw)
	if len(got) != len(in) {
		t.Fatalf("franz-go read %d records", len(got))
	}
	for i, r := range got {
		if msg := sameRecord(fromFranz(r), in[i]); msg != "" {
			t.Errorf("record %d: %s", i, msg)
		}
	}
	h, _ := ParseHeader(raw)
	if hz, ok := h.DeleteHorizon(); !ok || hz != 1900000000000 || h.LastOffset() != 31 || h.ProducerID != -1 {
		t.Errorf("header %+v", h)
	}
	if !bytes.HasPrefix(raw[BatchHeaderSize:], []byte("\x82SNAPPY\x00")) {
		t.Error("snappy records area is not xerial-framed")
	}
}

func decodeOne(t *testing.T, raw []byte) []Record {
	t.Helper()
	s := NewBytesScanner(raw, "one")
	if !s.Next() {
		t.Fatalf("scan: %v", s.Err())
	}
	var out []Record
	var d Decoder
	if err := d.Records(s.Batch(), func(r *Record) bool { out = append(out, r.Clone()); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeepOffsetsRejects: offsets that a batch cannot hold, and a last
// offset delta below the last record's, are errors that leave dst alone.
func TestKeepOffsetsRejects(t *testing.T) {
	cases := map[string]struct {
		offsets []int64
		last    int32
	}{
		"below base":       {[]int64{9, 11}, 0},
		"repeated":         {[]int64{10, 12, 12}, 0},
		"decreasing":       {[]int64{10, 14, 12}, 0},
		"past int32 delta": {[]int64{10, 10 + math.MaxInt32 + 1}, 0},
		"last delta short": {[]int64{10, 15}, 4},
	}
	for name, c := range cases {
		recs := make([]Record, len(c.offsets))
		for i, o := range c.offsets {
			recs[i] = Record{Offset: o, Timestamp: 1, Value: []byte("v")}
		}
		var e Encoder
		out, err := e.AppendBatch([]byte("prefix"), 10, recs, BatchOptions{KeepOffsets: true, LastOffsetDelta: c.last, Codec: LZ4})
		if err == nil || string(out) != "prefix" {
			t.Errorf("%s: %q, %v", name, out, err)
		}
	}
}

// TestAppendEmptyBatch: the header-only batch Kafka's writeEmptyHeader
// writes, checked field by field and by franz-go (no records, CRC ok).
func TestAppendEmptyBatch(t *testing.T) {
	var e Encoder
	opt := cleanerOpt(Zstd)
	opt.Transactional, opt.DeleteHorizonMs = true, 5
	raw := e.AppendEmptyBatch([]byte("x"), 10, 1764410403000, opt)[1:]
	if len(raw) != BatchHeaderSize {
		t.Fatalf("%d bytes", len(raw))
	}
	h, err := ParseHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseOffset != 10 || h.LastOffset() != 35 || h.NumRecords != 0 || h.Length != BatchHeaderSize-LogOverhead ||
		h.Attributes != attrTransactional || h.BaseTimestamp != -1 || h.MaxTimestamp != 1764410403000 ||
		h.ProducerID != 77 || h.ProducerEpoch != 4 || h.BaseSequence != 1000 || h.PartitionLeaderEpoch != 9 {
		t.Errorf("header %+v", h)
	}
	if crc := crc32.Checksum(raw[21:], castagnoli); crc != h.CRC {
		t.Errorf("crc %08x, want %08x", h.CRC, crc)
	}
	if got := franzDecode(t, raw); len(got) != 0 {
		t.Errorf("franz-go read %d records", len(got))
	}
	if recs := decodeOne(t, raw); len(recs) != 0 {
		t.Errorf("%d records", len(recs))
	}
}

// TestAppendRecordsMatchesReference: the records area equals the one the
// plain field-by-field writer produces, for keyless records (the fast
// path: null values, multi-byte varints, negative deltas) and others.
func TestAppendRecordsMatchesReference(t *testing.T) {
	recs := append(sampleRecords(), logLines(3)...)
	recs = append(recs,
		Record{Timestamp: -5, Value: nil},
		Record{Timestamp: 1 << 40, Value: bytes.Repeat([]byte("x"), 20000)},
		Record{Timestamp: 3, Value: []byte{}},
		Record{Offset: 1 << 20, Timestamp: 3, Value: []byte("far")})
	for _, keep := range []bool{false, true} {
		deltas := offsetDeltas{keep: keep, base: -100}
		got, err := appendRecords([]byte("p"), recs, 1000, deltas)
		if err != nil {
			t.Fatal(err)
		}
		want := []byte("p")
		for i := range recs {
			want = referenceRecord(want, &recs[i], recs[i].Timestamp-1000, map[bool]int64{false: int64(i), true: recs[i].Offset + 100}[keep])
		}
		if !bytes.Equal(got, want) {
			t.Errorf("keep=%v: records area differs from the reference", keep)
		}
	}
}

// referenceRecord writes one record field by field with encoding/binary.
func referenceRecord(b []byte, r *Record, tsDelta, offDelta int64) []byte {
	field := func(b, v []byte) []byte {
		if v == nil {
			return binary.AppendVarint(b, -1)
		}
		return append(binary.AppendVarint(b, int64(len(v))), v...)
	}
	var body []byte
	body = append(body, 0)
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, offDelta)
	body = field(field(body, r.Key), r.Value)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = field(field(body, []byte(h.Key)), h.Value)
	}
	return append(binary.AppendVarint(b, int64(len(body))), body...)
}
