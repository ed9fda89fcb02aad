package record

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
)

// TestEncodeMatchesBrokerBytes re-encodes real broker batches from their
// records and compares byte for byte (header, varints, CRC-32C).
func TestEncodeMatchesBrokerBytes(t *testing.T) {
	dir := testfixtures.Dir(t)
	for _, name := range []string{"kafka-python/record_batch_data_v2_0.bin", "kafka-python/record_batch_data_v2_1.bin"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		h, err := ParseHeader(want)
		if err != nil {
			t.Fatal(err)
		}
		var recs []Record
		var d Decoder
		b := &Batch{Header: h, Raw: want}
		if err := d.Records(b, func(r *Record) bool { recs = append(recs, r.Clone()); return true }); err != nil {
			t.Fatal(err)
		}
		var e Encoder
		got, err := e.AppendBatch(nil, h.BaseOffset, recs, BatchOptions{KeepProducer: true,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: h.PartitionLeaderEpoch})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got  % x\n want % x", name, got, want)
		}
	}
}

func TestEncodeHeaderFields(t *testing.T) {
	recs := []Record{{Timestamp: 50, Value: []byte("a")}, {Timestamp: 40, Value: []byte("b")}}
	cases := []struct {
		name  string
		opt   BatchOptions
		check func(h BatchHeader) bool
		ts    []int64 // record timestamps as decoded
	}{
		{"plain", BatchOptions{}, func(h BatchHeader) bool {
			return h.BaseTimestamp == 50 && h.MaxTimestamp == 50 && h.ProducerID == -1 && h.ProducerEpoch == -1 &&
				h.BaseSequence == -1 && h.PartitionLeaderEpoch == -1 && h.Attributes == 0 && h.LastOffsetDelta == 1
		}, []int64{50, 40}},
		{"log append time", BatchOptions{LogAppendTime: true, LogAppendTimeMs: 99}, func(h BatchHeader) bool {
			return h.LogAppendTime() && h.MaxTimestamp == 99 && h.Attributes == 0x08
		}, []int64{99, 99}},
		{"delete horizon", BatchOptions{DeleteHorizonMs: 1000}, func(h BatchHeader) bool {
			hz, ok := h.DeleteHorizon()
			return ok && hz == 1000 && h.BaseTimestamp == 1000 && h.Attributes == 0x40
		}, []int64{50, 40}},
		{"cleaner identity", BatchOptions{LastOffsetDelta: 9, Control: true, Transactional: true, KeepProducer: true,
			ProducerID: 7, ProducerEpoch: 3, BaseSequence: 11, PartitionLeaderEpoch: 5, Codec: Zstd}, func(h BatchHeader) bool {
			return h.LastOffset() == 19 && h.IsControl() && h.IsTransactional() && h.ProducerID == 7 && h.ProducerEpoch == 3 &&
				h.BaseSequence == 11 && h.PartitionLeaderEpoch == 5 && h.Codec() == Zstd
		}, []int64{50, 40}},
	}
	for _, c := range cases {
		var e Encoder
		raw, err := e.AppendBatch(nil, 10, recs, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		s := NewBytesScanner(raw, c.name)
		if !s.Next() {
			t.Fatalf("%s: %v", c.name, s.Err())
		}
		if !c.check(s.Batch().Header) {
			t.Errorf("%s: header %+v", c.name, s.Batch().Header)
		}
		var ts []int64
		var d Decoder
		d.Records(s.Batch(), func(r *Record) bool { ts = append(ts, r.Timestamp); return true })
		if len(ts) != 2 || ts[0] != c.ts[0] || ts[1] != c.ts[1] {
			t.Errorf("%s: timestamps %v, want %v", c.name, ts, c.ts)
		}
	}
}

func TestEncodeErrorsKeepDst(t *testing.T) {
	var e Encoder
	dst := []byte("prefix")
	out, err := e.AppendBatch(dst, 0, []Record{{}}, BatchOptions{Codec: 6})
	if err == nil || string(out) != "prefix" {
		t.Errorf("codec 6: %q %v", out, err)
	}
}

// TestVarintHelpers: the varint size and writer helpers agree with
// encoding/binary at every size boundary.
func TestVarintHelpers(t *testing.T) {
	var vals []uint64
	for s := 0; s < 64; s += 7 {
		for _, d := range []int64{-1, 0, 1} {
			vals = append(vals, uint64(int64(1)<<s+d))
		}
	}
	vals = append(vals, 0, 1<<63, 1<<64-1)
	for _, u := range vals {
		want := binary.AppendUvarint(nil, u)
		if u < 1<<21 {
			w, n := packUvarint3(u)
			if got := binary.LittleEndian.AppendUint64(nil, w); n != len(want) || !bytes.Equal(got[:n], want) || w>>(8*n) != 0 {
				t.Errorf("packUvarint3(%#x) = %#x, %d, want % x", u, w, n, want)
			}
		}
		v := int64(u)
		if n := len(binary.AppendVarint(nil, v)); varintLen(v) != n {
			t.Errorf("varintLen(%d) = %d, want %d", v, varintLen(v), n)
		}
	}
}

// TestRecordSize: RecordSize is the size appendRecord writes, for null and
// empty fields, headers, and deltas and lengths across varint sizes.
func TestRecordSize(t *testing.T) {
	blob := make([]byte, 20000)
	for _, n := range []int{-1, 0, 1, 63, 64, 8191, 8192, 20000} {
		var v []byte
		if n >= 0 {
			v = blob[:n]
		}
		for _, r := range []Record{{Value: v}, {Key: v, Value: blob[:5]}, {Value: v, Headers: []Header{{Key: "k", Value: v}, {Key: "", Value: nil}}}} {
			for _, d := range []int64{0, -1, 63, 64, -8193, 1 << 40} {
				got, err := appendRecord(nil, &r, d, d&0xffffff)
				if err != nil {
					t.Fatal(err)
				}
				if size := RecordSize(&r, d, d&0xffffff); size != int64(len(got)) {
					t.Errorf("value %d bytes, delta %d: RecordSize %d, encoded %d", n, d, size, len(got))
				}
			}
		}
	}
}
