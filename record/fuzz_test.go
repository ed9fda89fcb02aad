package record

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
)

// addFixtureSeeds seeds f with every fixture file (when present) and a few
// encoded batches, filtered by keep.
func addFixtureSeeds(f *testing.F, keep func(b []byte) bool) {
	var e Encoder
	for _, c := range allCodecs {
		b, _ := e.AppendBatch(nil, 5, sampleRecords()[:4], BatchOptions{Codec: c})
		f.Add(b)
	}
	filepath.Walk(testfixtures.Dir(f), func(p string, info os.FileInfo, err error) error {
		if err == nil && filepath.Ext(p) == ".bin" {
			if b, err := os.ReadFile(p); err == nil && keep(b) {
				f.Add(b)
			}
		}
		return nil
	})
}

// fuzzDecode scans and decodes everything in data, returning the records.
func fuzzDecode(data []byte) ([]Record, error) {
	s := NewBytesScanner(data, "fuzz")
	d := Decoder{MaxDecompressed: 1 << 20}
	var out []Record
	for s.Next() {
		if err := d.Records(s.Batch(), func(r *Record) bool { out = append(out, r.Clone()); return true }); err != nil {
			return out, err
		}
	}
	return out, s.Err()
}

// FuzzScanner feeds arbitrary record sets (any magic) to the scanner and
// decoder: no panic, no hang, allocation bounded by the input and the bound.
func FuzzScanner(f *testing.F) {
	addFixtureSeeds(f, func([]byte) bool { return true })
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(data)
		ParseHeader(data)
	})
}

// FuzzV2 decodes V2 batches; whatever decodes is re-encoded and must
// decode to the same records; re-encoded with KeepOffsets it keeps their
// offsets, or is refused when they do not increase.
func FuzzV2(f *testing.F) {
	addFixtureSeeds(f, func(b []byte) bool { return len(b) > 16 && b[16] == 2 })
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16 && data[16] != 2 {
			return
		}
		recs, err := fuzzDecode(data)
		if err != nil || len(recs) == 0 {
			return
		}
		var e Encoder
		again, err := e.AppendBatch(nil, recs[0].Offset, recs, BatchOptions{})
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := fuzzDecode(again)
		if err != nil || len(back) != len(recs) {
			t.Fatalf("re-decode: %d records, %v", len(back), err)
		}
		for i := range back {
			if !bytes.Equal(back[i].Key, recs[i].Key) || !bytes.Equal(back[i].Value, recs[i].Value) ||
				len(back[i].Headers) != len(recs[i].Headers) || back[i].Timestamp != recs[i].Timestamp {
				t.Fatalf("record %d changed: %+v -> %+v", i, recs[i], back[i])
			}
		}
		checkKeptOffsets(t, &e, recs)
	})
}

// checkKeptOffsets re-encodes recs with KeepOffsets: increasing offsets
// come back as they were, others are an error.
func checkKeptOffsets(t *testing.T, e *Encoder, recs []Record) {
	increasing := true
	for i := 1; i < len(recs); i++ {
		d := recs[i].Offset - recs[0].Offset
		increasing = increasing && recs[i].Offset > recs[i-1].Offset && d >= 0 && d <= 1<<31-1
	}
	kept, err := e.AppendBatch(nil, recs[0].Offset, recs, BatchOptions{KeepOffsets: true, Codec: LZ4})
	if err != nil {
		if increasing {
			t.Fatalf("kept offsets refused: %v", err)
		}
		return
	}
	back, err := fuzzDecode(kept)
	if !increasing || err != nil || len(back) != len(recs) {
		t.Fatalf("kept offsets: increasing=%v, %d records, %v", increasing, len(back), err)
	}
	for i := range back {
		if back[i].Offset != recs[i].Offset {
			t.Fatalf("record %d at offset %d, want %d", i, back[i].Offset, recs[i].Offset)
		}
	}
}

// FuzzLegacy decodes V0/V1 message sets, including compressed wrappers.
func FuzzLegacy(f *testing.F) {
	addFixtureSeeds(f, func(b []byte) bool { return len(b) > 16 && b[16] < 2 })
	in := append(legacyMessage(0, 1, 0, 100, []byte("a"), []byte("1")), legacyMessage(1, 1, 0, 90, nil, []byte("2"))...)
	for _, c := range []Codec{Gzip, Snappy, LZ4} {
		f.Add(wrapper(f, 1, 1, c, 0, 100, in))
		f.Add(wrapper(f, 1, 0, c, 0, 100, in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16 && data[16] >= 2 {
			return
		}
		fuzzDecode(data)
	})
}

// FuzzRecordParsers: the fast record parser and the explaining one agree on
// what is malformed and on the parsed record.
func FuzzRecordParsers(f *testing.F) {
	recs := sampleRecords()
	for i := range recs[:4] {
		area, _ := appendRecords(nil, recs[i:i+1], 0, offsetDeltas{})
		f.Add(area)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := BatchHeader{BaseOffset: 10, BaseTimestamp: 1000}
		var d Decoder
		rest, ok := d.fastRecord(data, &h)
		fast := d.rec.Clone()
		rest2, reason := d.parseRecord(data, &h)
		if ok != (reason == "") || ok && len(rest) != len(rest2) {
			t.Fatalf("fast ok=%v rest %d, slow reason %q rest %d", ok, len(rest), reason, len(rest2))
		}
		if ok {
			if msg := sameRecord(d.rec.Clone(), fast); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}

// FuzzSimpleRecords: the one-loop parser of common records agrees with
// fastRecord on every record it passes, and on where it stops.
func FuzzSimpleRecords(f *testing.F) {
	recs := sampleRecords()[:4]
	recs = append(recs, logLines(3)...)
	area, _ := appendRecords(nil, recs, recs[0].Timestamp, offsetDeltas{})
	f.Add(area)
	area, _ = appendRecords(nil, logLines(5), 0, offsetDeltas{})
	f.Add(area)
	f.Fuzz(func(t *testing.T, data []byte) {
		h := BatchHeader{BaseOffset: 10, BaseTimestamp: 1000, Attributes: int16(len(data) & attrLogAppendTime), MaxTimestamp: 7}
		var d, ref Decoder
		var got []Record
		n, used, _ := d.simpleRecords(data, &h, 64, math.MinInt64, math.MaxInt64, func(r *Record) bool { got = append(got, r.Clone()); return true })
		if int(n) != len(got) || used > len(data) {
			t.Fatalf("n %d, %d records, used %d of %d", n, len(got), used, len(data))
		}
		rest := data
		for i := range got {
			var ok bool
			if rest, ok = ref.fastRecord(rest, &h); !ok {
				t.Fatalf("record %d: simple parser passed what fastRecord refuses", i)
			}
			if msg := sameRecord(got[i], ref.rec); msg != "" {
				t.Fatalf("record %d: %s", i, msg)
			}
		}
		if len(data)-len(rest) != used {
			t.Fatalf("used %d bytes, fastRecord %d", used, len(data)-len(rest))
		}
	})
}
