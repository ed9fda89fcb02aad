package record

import (
	"errors"
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

// TestRecordsIn: only the records in [from, next) reach fn, in order,
// for both parsers (the log lines and the sample records between them)
// and for a legacy message; stopped says whether the walk ended early.
func TestRecordsIn(t *testing.T) {
	recs := append(logLines(10), sampleRecords()...)
	recs = append(recs, logLines(10)...)
	var e Encoder
	raw, err := e.AppendBatch(nil, 100, recs, BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := &Batch{Raw: raw}
	b.Header, _ = ParseHeader(raw)
	end := 100 + int64(len(recs))
	for _, c := range []struct {
		from, next, stopAt int64 // stopAt: fn returns false there
		want               []int64
		stopped            bool
	}{
		{0, 1 << 40, -1, []int64{100, end - 1}, false},
		{103, end, -1, []int64{103, end - 1}, false},
		{111, 114, -1, []int64{111, 113}, true},
		{100, end, 112, []int64{100, 112}, true},
		{end, end + 5, -1, nil, false},
	} {
		var got []int64
		var d Decoder
		stopped, err := d.RecordsIn(b, c.from, c.next, func(r *Record) bool {
			if len(got) > 0 && r.Offset != got[len(got)-1]+1 {
				t.Errorf("[%d, %d): offset %d after %d", c.from, c.next, r.Offset, got[len(got)-1])
			}
			got = append(got, r.Offset)
			return r.Offset != c.stopAt
		})
		if err != nil || stopped != c.stopped || len(got) != 0 && (got[0] != c.want[0] || got[len(got)-1] != c.want[1]) || len(got) == 0 && c.want != nil {
			t.Errorf("[%d, %d) stop at %d: offsets %v, stopped %v, %v; want %v, %v", c.from, c.next, c.stopAt, got, stopped, err, c.want, c.stopped)
		}
		n := 0
		if err := d.Records(b, func(*Record) bool { n++; return true }); err != nil || n != len(recs) { // the bounds do not stay
			t.Fatalf("Records after RecordsIn: %d records, %v", n, err)
		}
	}
	legacy := legacyMessage(7, 1, 0, 1764410400000, nil, []byte("v"))
	lb := &Batch{Raw: legacy}
	lb.Header, _ = ParseHeader(legacy)
	var d Decoder
	for _, c := range []struct {
		from, next int64
		n          int
		stopped    bool
	}{{0, 100, 1, false}, {8, 100, 0, false}, {0, 7, 0, true}} {
		n := 0
		stopped, err := d.RecordsIn(lb, c.from, c.next, func(*Record) bool { n++; return true })
		if err != nil || n != c.n || stopped != c.stopped {
			t.Errorf("legacy [%d, %d): %d records, stopped %v, %v", c.from, c.next, n, stopped, err)
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

// TestRecordsInSkipsToFrom: RecordsIn from any offset of a batch (before,
// inside and past it, in its offset gaps, uncompressed and LZ4, varints of
// one to three bytes) passes
// exactly the records a full decode has at or after that offset, byte for
// byte; and a record before from whose length runs past the batch's bytes,
// or does not hold its deltas, fails the read as a corruption, as a full
// decode of it does.
func TestRecordsInSkipsToFrom(t *testing.T) {
	// 300 records: lengths, timestamp deltas and offset deltas of one to
	// three bytes, mixed
	mixed := make([]Record, 300)
	for i := range mixed {
		mixed[i] = Record{Offset: 10 + int64(i)*3/2, Timestamp: 1764464400000 + int64(i%7)*int64(i%7)*9000,
			Value: make([]byte, []int{3, 70, 9000}[i%3])}
		if i%5 == 0 {
			mixed[i].Key = []byte("k")
		}
	}
	mixedOpt := BatchOptions{KeepOffsets: true}
	for _, c := range []struct {
		recs []Record
		opt  BatchOptions
	}{{gapped(), cleanerOpt(None)}, {gapped(), cleanerOpt(LZ4)}, {mixed, mixedOpt}} {
		var e Encoder
		raw, err := e.AppendBatch(nil, 10, c.recs, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		all := decodeOne(t, raw)
		last := all[len(all)-1].Offset
		b := &Batch{Raw: raw}
		b.Header, _ = ParseHeader(raw)
		var d Decoder
		for from := int64(8); from <= last+2; from++ {
			var got []Record
			if _, err := d.RecordsIn(b, from, 1<<40, func(r *Record) bool { got = append(got, r.Clone()); return true }); err != nil {
				t.Fatalf("%d records from %d: %v", len(all), from, err)
			}
			var want []Record
			for _, r := range all {
				if r.Offset >= from {
					want = append(want, r)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d records from %d: %d passed, want %d", len(all), from, len(got), len(want))
			}
			for i := range got {
				if msg := sameRecord(got[i], want[i]); msg != "" {
					t.Fatalf("%d records from %d, record %d: %s", len(all), from, i, msg)
				}
			}
		}
	}
	var e Encoder
	short := []Record{{Value: []byte("v0")}, {Value: []byte("v1")}, {Value: []byte("v2")}, {Value: []byte("v3")}, {Value: []byte("v4")}}
	raw, err := e.AppendBatch(nil, 100, short, BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second := BatchHeaderSize + 1 + int(raw[BatchHeaderSize]>>1) // each length takes one byte
	// the second record's length: 63, past the records' bytes; 1, shorter
	// than its deltas
	for _, length := range []byte{0x7e, 0x02} {
		bad := append([]byte(nil), raw...)
		bad[second] = length
		b := &Batch{Raw: bad}
		b.Header, _ = ParseHeader(bad)
		var d Decoder
		for _, from := range []int64{102, 104} {
			n := 0
			_, err := d.RecordsIn(b, from, 1<<40, func(*Record) bool { n++; return true })
			if !errors.Is(err, ErrCorruption) || n != 0 {
				t.Errorf("from %d past a record of length byte %#x: %v after %d records, want a corruption", from, length, err, n)
			}
		}
		if err := d.Records(b, func(*Record) bool { return true }); !errors.Is(err, ErrCorruption) {
			t.Errorf("full decode of the same batch: %v, want a corruption", err)
		}
	}
}
