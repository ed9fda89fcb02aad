package record

import (
	"math/rand/v2"
	"testing"
)

// TestRecordsStopAnywhere: a batch mixing records the one-loop parser
// takes (keyless, no headers) and records it leaves to fastRecord decodes
// in order with the right offsets, and stops exactly where fn says.
func TestRecordsStopAnywhere(t *testing.T) {
	recs := append(logLines(40), sampleRecords()...)
	recs = append(recs, logLines(40)...)
	recs[3].Headers = []Header{{Key: "h", Value: []byte("v")}}
	for _, c := range []Codec{None, LZ4} {
		var e Encoder
		raw, err := e.AppendBatch(nil, 500, recs, BatchOptions{Codec: c})
		if err != nil {
			t.Fatal(err)
		}
		all := decodeOne(t, raw)
		if len(all) != len(recs) {
			t.Fatalf("%v: %d records", c, len(all))
		}
		for i := range all {
			want := recs[i]
			want.Offset = 500 + int64(i)
			if msg := sameRecord(all[i], want); msg != "" {
				t.Fatalf("%v record %d: %s", c, i, msg)
			}
		}
		b := &Batch{Raw: raw}
		b.Header, _ = ParseHeader(raw)
		var d Decoder
		for stop := 1; stop <= len(recs); stop++ {
			n := 0
			err := d.Records(b, func(r *Record) bool { n++; return r.Offset < 500+int64(stop)-1 })
			if err != nil || n != stop {
				t.Fatalf("%v: stop at %d: %d records, %v", c, stop, n, err)
			}
		}
	}
}

// TestRecordShapes: records of every shape the one-loop parser meets or
// leaves to fastRecord (null, empty and long keys and values, 1-, 2- and
// 3-byte varints, headers, timestamps before the base, LogAppendTime)
// decode to what was encoded, in order, whatever their mix.
func TestRecordShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	sizes := []int{0, 1, 5, 63, 64, 100, 8191, 8192, 9000}
	blob := make([]byte, 9000)
	for i := range blob {
		blob[i] = byte(rng.IntN(256))
	}
	field := func() []byte {
		if rng.IntN(8) == 0 {
			return nil
		}
		return blob[:sizes[rng.IntN(len(sizes))]]
	}
	for round := 0; round < 40; round++ {
		recs := make([]Record, 1+rng.IntN(300))
		for i := range recs {
			r := &recs[i]
			r.Timestamp = 1764464400000 + rng.Int64N(20000) - 5000
			r.Value = field()
			if rng.IntN(3) == 0 {
				r.Key = field()
			}
			if rng.IntN(10) == 0 {
				r.Headers = []Header{{Key: "h", Value: field()}}
			}
		}
		for _, opt := range []BatchOptions{{}, {Codec: LZ4}, {LogAppendTime: true, LogAppendTimeMs: 42}} {
			var e Encoder
			raw, err := e.AppendBatch(nil, 1000, recs, opt)
			if err != nil {
				t.Fatal(err)
			}
			got := decodeOne(t, raw)
			if len(got) != len(recs) {
				t.Fatalf("round %d %+v: %d records, want %d", round, opt, len(got), len(recs))
			}
			for i := range got {
				want := recs[i]
				want.Offset = 1000 + int64(i)
				if opt.LogAppendTime {
					want.Timestamp = 42
				}
				if msg := sameRecord(got[i], want); msg != "" {
					t.Fatalf("round %d %+v record %d: %s", round, opt, i, msg)
				}
			}
		}
	}
}
