package record

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRecordPrefix: walking an uncompressed batch with RecordPrefix gives
// every record's size, offset and timestamp as the decoder reads them, for
// varints of one to many bytes (large values, far timestamps, many
// records), keys, headers and LogAppendTime; malformed prefixes say why.
func TestRecordPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	blob := make([]byte, 70000)
	for round := 0; round < 30; round++ {
		recs := make([]Record, 1+rng.IntN(400))
		for i := range recs {
			r := &recs[i]
			r.Timestamp = 1764464400000 + rng.Int64N(1<<uint(rng.IntN(40)))
			r.Value = blob[:[]int{0, 5, 100, 8191, 8192, 70000}[rng.IntN(6)]]
			if rng.IntN(3) == 0 {
				r.Key = blob[:rng.IntN(300)]
			}
			if rng.IntN(8) == 0 {
				r.Headers = []Header{{Key: "h", Value: blob[:3]}}
			}
		}
		opt := BatchOptions{}
		if round%5 == 4 {
			opt = BatchOptions{LogAppendTime: true, LogAppendTimeMs: 42}
		}
		var e Encoder
		raw, err := e.AppendBatch(nil, 500, recs, opt)
		if err != nil {
			t.Fatal(err)
		}
		h, err := ParseHeader(raw)
		if err != nil {
			t.Fatal(err)
		}
		var want [][3]int64 // offset, timestamp, end position
		var d Decoder
		if err := d.Records(&Batch{Header: h, Raw: raw}, func(r *Record) bool {
			want = append(want, [3]int64{r.Offset, r.Timestamp, 0})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		p := int64(BatchHeaderSize)
		for i, w := range want {
			size, off, ts, reason := RecordPrefix(raw[p:min(int(p)+MaxRecordPrefix, len(raw))], &h)
			if reason != "" || off != w[0] || ts != w[1] {
				t.Fatalf("round %d record %d at %d: got %d %d %q, want %d %d", round, i, p, off, ts, reason, w[0], w[1])
			}
			p += size
		}
		if p != int64(len(raw)) {
			t.Fatalf("round %d: walk ended at %d of %d", round, p, len(raw))
		}
	}
}

func TestRecordPrefixMalformed(t *testing.T) {
	h := &BatchHeader{BaseOffset: 10, LastOffsetDelta: 3}
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{[]byte{}, "bad record length"},
		{[]byte{0x01, 0, 0, 0}, "bad record length"},                      // length -1
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "bad record length"}, // varint too long
		{[]byte{0x02, 0}, "bad timestamp delta varint"},                   // body of one byte
		{[]byte{0x0a, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "bad timestamp delta varint"},
		{[]byte{0x0a, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x7f}, "bad offset delta varint"}, // beyond int32
		{[]byte{0x0a, 0, 0, 0x0a, 0, 0, 0, 0}, "offset delta 5 outside the batch's [0, 3]"},
		{[]byte{0x0a, 0, 0, 0x01, 0, 0, 0, 0}, "offset delta -1 outside"},
	} {
		_, _, _, reason := RecordPrefix(c.b, h)
		if !strings.HasPrefix(reason, c.want) {
			t.Errorf("%x: reason %q, want %q", c.b, reason, c.want)
		}
	}
}

// FuzzRecordPrefix: any bytes give a prefix inside the batch's offsets or a
// reason, never a panic.
func FuzzRecordPrefix(f *testing.F) {
	var e Encoder
	raw, _ := e.AppendBatch(nil, 0, logLines(3), BatchOptions{})
	f.Add(raw[BatchHeaderSize:], int32(2))
	f.Add([]byte{0x0a, 0, 0, 0x0a}, int32(7))
	f.Fuzz(func(t *testing.T, b []byte, last int32) {
		h := &BatchHeader{BaseOffset: 100, LastOffsetDelta: last}
		size, off, _, reason := RecordPrefix(b, h)
		if reason == "" && (size < 1 || off < 100 || off > 100+int64(last)) {
			t.Fatalf("%x: size %d offset %d accepted", b, size, off)
		}
	})
}
