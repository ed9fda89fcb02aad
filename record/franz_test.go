package record

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var allCodecs = []Codec{None, Gzip, Snappy, LZ4, Zstd}

// sampleRecords covers null/empty keys and values, binary bytes, headers
// with null values, negative timestamp deltas and a large compressible value.
func sampleRecords() []Record {
	big := bytes.Repeat([]byte("0123456789abcdef"), 9000) // > 64 KiB: several LZ4 / xerial blocks
	return []Record{
		{Timestamp: 1764410400000, Key: []byte("k1"), Value: []byte("v1"), Headers: []Header{{Key: "h", Value: []byte("x")}}},
		{Timestamp: 1764410399000, Key: nil, Value: []byte("no key")},
		{Timestamp: 1764410401000, Key: []byte("tomb"), Value: nil},
		{Timestamp: 1764410402000, Key: []byte{}, Value: []byte{}, Headers: []Header{{Key: "n", Value: nil}, {Key: "", Value: []byte{0xff, 0}}}},
		{Timestamp: 1764410403000, Key: []byte{0xfe, 0xff}, Value: big},
	}
}

// franzDecode decodes a whole record set with franz-go's consumer path
// (which verifies CRCs).
func franzDecode(t *testing.T, set []byte) []*kgo.Record {
	t.Helper()
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true},
		&kmsg.FetchResponseTopicPartition{RecordBatches: set, HighWatermark: 1 << 62, LastStableOffset: 1 << 62},
		kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		t.Fatalf("franz-go: %v", fp.Err)
	}
	return fp.Records
}

func TestEncodeDecodedByFranz(t *testing.T) {
	in := sampleRecords()
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			var e Encoder
			set, err := e.AppendBatch(nil, 100, in, BatchOptions{Codec: c})
			if err != nil {
				t.Fatal(err)
			}
			set, err = e.AppendBatch(set, 105, in[:2], BatchOptions{Codec: c})
			if err != nil {
				t.Fatal(err)
			}
			got := franzDecode(t, set)
			want := append(append([]Record{}, in...), in[:2]...)
			if len(got) != len(want) {
				t.Fatalf("franz-go read %d records, want %d", len(got), len(want))
			}
			for i, r := range got {
				w := want[i]
				w.Offset = 100 + int64(i)
				if i >= len(in) {
					w.Offset = 105 + int64(i-len(in))
				}
				if msg := sameRecord(fromFranz(r), w); msg != "" {
					t.Errorf("record %d: %s", i, msg)
				}
			}
			checkFranzHeader(t, set)
		})
	}
}

// checkFranzHeader reads the first batch's header with kmsg and checks the
// fields Kafka writes for a plain producer.
func checkFranzHeader(t *testing.T, set []byte) {
	var b kmsg.RecordBatch
	if err := b.ReadFrom(set); err != nil {
		t.Fatal(err)
	}
	if b.FirstOffset != 100 || b.LastOffsetDelta != 4 || b.NumRecords != 5 || b.Magic != 2 ||
		b.ProducerID != -1 || b.ProducerEpoch != -1 || b.FirstSequence != -1 || b.PartitionLeaderEpoch != -1 ||
		b.FirstTimestamp != 1764410400000 || b.MaxTimestamp != 1764410403000 {
		t.Errorf("header as kmsg reads it: %+v", b)
	}
	if crc := crc32.Checksum(set[21:12+b.Length], crc32.MakeTable(crc32.Castagnoli)); uint32(b.CRC) != crc {
		t.Errorf("crc %08x, computed %08x", uint32(b.CRC), crc)
	}
}

func fromFranz(r *kgo.Record) Record {
	out := Record{Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(), Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, Header{Key: h.Key, Value: h.Value})
	}
	return out
}

// sameRecord compares offset, timestamp, key, value and headers, including
// the difference between null and empty.
func sameRecord(got, want Record) string {
	switch {
	case got.Offset != want.Offset || got.Timestamp != want.Timestamp:
		return fmt.Sprintf("offset/timestamp %d/%d, want %d/%d", got.Offset, got.Timestamp, want.Offset, want.Timestamp)
	case !sameBytes(got.Key, want.Key):
		return fmt.Sprintf("key %q, want %q", got.Key, want.Key)
	case !sameBytes(got.Value, want.Value):
		return fmt.Sprintf("value of %d bytes, want %d", len(got.Value), len(want.Value))
	case len(got.Headers) != len(want.Headers):
		return fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers))
	}
	for i := range got.Headers {
		if got.Headers[i].Key != want.Headers[i].Key || !sameBytes(got.Headers[i].Value, want.Headers[i].Value) {
			return fmt.Sprintf("header %d = %q, want %q", i, got.Headers[i], want.Headers[i])
		}
	}
	return ""
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// franzBatch builds a V2 batch the way franz-go's producer does
// (franzBuilder).
func franzBatch(t *testing.T, base int64, recs []Record, c kgo.CompressionCodec) []byte {
	t.Helper()
	fb, err := newFranzBuilder(c)
	if err != nil {
		t.Fatal(err)
	}
	return fb.build(nil, base, recs)
}

func TestFranzCompressedDecodedByUs(t *testing.T) {
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	in := sampleRecords()
	in[1].Timestamp = in[0].Timestamp // franz-go writes max = last here
	for i, c := range codecs {
		t.Run(allCodecs[i].String(), func(t *testing.T) {
			raw := franzBatch(t, 7, in, c)
			if got := Codec(raw[22] & 7); got != allCodecs[i] {
				t.Fatalf("franz-go wrote codec %v", got)
			}
			var got []Record
			s, d := NewBytesScanner(raw, "franz"), Decoder{}
			for s.Next() {
				if err := d.Records(s.Batch(), func(r *Record) bool { got = append(got, r.Clone()); return true }); err != nil {
					t.Fatal(err)
				}
			}
			if s.Err() != nil || len(got) != len(in) {
				t.Fatalf("err %v, %d records", s.Err(), len(got))
			}
			for j := range got {
				w := in[j]
				w.Offset = 7 + int64(j)
				if msg := sameRecord(got[j], w); msg != "" {
					t.Errorf("record %d: %s", j, msg)
				}
			}
		})
	}
}

// TestLogAppendTimeByFranz: franz-go reads every record of our
// LogAppendTime batch at maxTimestamp, and our delete-horizon batch with
// the record timestamps we gave.
func TestLogAppendTimeByFranz(t *testing.T) {
	in := sampleRecords()
	var e Encoder
	set, _ := e.AppendBatch(nil, 0, in, BatchOptions{Codec: Zstd, LogAppendTime: true, LogAppendTimeMs: 1800000000000})
	set, _ = e.AppendBatch(set, 5, in, BatchOptions{Codec: LZ4, DeleteHorizonMs: 1900000000000})
	got := franzDecode(t, set)
	if len(got) != 10 {
		t.Fatalf("%d records", len(got))
	}
	for i, r := range got {
		want := in[i%5].Timestamp
		if i < 5 {
			want = 1800000000000
		}
		if r.Timestamp.UnixMilli() != want || r.Offset != int64(i) {
			t.Errorf("record %d: offset %d ts %d, want ts %d", i, r.Offset, r.Timestamp.UnixMilli(), want)
		}
	}
}
