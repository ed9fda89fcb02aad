package record

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// randomLines is text of n lines of varied lengths (empty, below and
// above putKeyless's bounds, with stray bytes), cut into 1 to 3 chunks
// anywhere, lines included, with an unfinished line at the end of some.
func randomLines(rng *rand.Rand, n int) [][]byte {
	var text []byte
	for range n {
		size := []int{0, 1, 3, 4, 100, 2000, keylessMaxValue + 10}[rng.Intn(7)]
		if size > 2000 && rng.Intn(8) > 0 {
			size = 120
		}
		for range size {
			text = append(text, "ab\"\\é\x00x"[rng.Intn(8)])
		}
		text = append(text, '\n')
	}
	if rng.Intn(2) == 0 {
		text = append(text, "unfinished"...)
	}
	var chunks [][]byte
	for k := rng.Intn(3); k > 0 && len(text) > 0; k-- {
		cut := rng.Intn(len(text))
		chunks, text = append(chunks, text[:cut]), text[cut:]
	}
	return append(chunks, text)
}

// AppendLineBatches writes the bytes and cuts of AppendBatches over the
// records AppendLineRecords makes of the same text, whatever the line
// lengths, chunking, limit and timestamp options. A line split across
// chunks is two records, as in AppendLineRecords.
func TestAppendLineBatchesMatchesRecords(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var e Encoder
	for round := range 80 {
		chunks := randomLines(rng, rng.Intn(400))
		recs := AppendLineRecords(nil, chunks...)
		opt := BatchOptions{DefaultTimestampMs: []int64{0, 1_764_410_450_000}[round%2]}
		if round%4 == 3 {
			opt.LogAppendTime, opt.LogAppendTimeMs = true, 1_764_410_460_000
		}
		limit := []int{80, 500, 4000, 70000, 1048588}[rng.Intn(5)]
		base := int64(rng.Intn(1000))
		want, wantEnds, err := e.AppendBatches([]byte("pre"), base, recs, opt, limit, []int{-1})
		if err != nil {
			t.Fatal(err)
		}
		got, ends, n, err := e.AppendLineBatches([]byte("pre"), base, chunks, opt, limit, []int{-1})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(recs) || !bytes.Equal(got, want) || fmt.Sprint(ends) != fmt.Sprint(wantEnds) {
			t.Fatalf("round %d (limit %d): %d records, want %d; bytes equal %v; ends %v, want %v",
				round, limit, n, len(recs), bytes.Equal(got, want), ends, wantEnds)
		}
	}
}

// More lines than putKeyless takes in one batch (offset deltas from 2^20
// on need 4-byte varints): the general path writes them, still the same
// bytes, and the result decodes to the lines.
func TestAppendLineBatchesLongBatch(t *testing.T) {
	text := bytes.Repeat([]byte("abcd\n"), 1<<20+100)
	var e Encoder
	got, ends, n, err := e.AppendLineBatches(nil, 7, [][]byte{text}, BatchOptions{}, 1<<30, nil)
	if err != nil || n != 1<<20+100 || len(ends) != 1 {
		t.Fatalf("%d records in %d batches: %v", n, len(ends), err)
	}
	want, _, _ := e.AppendBatches(nil, 7, AppendLineRecords(nil, text), BatchOptions{}, 1<<30, nil)
	if !bytes.Equal(got, want) {
		t.Fatal("bytes differ from AppendBatches")
	}
	s := NewBytesScanner(got, "lines")
	if !s.Next() {
		t.Fatal(s.Err())
	}
	count := 0
	err = new(Decoder).Records(s.Batch(), func(r *Record) bool {
		if r.Offset != 7+int64(count) || string(r.Value) != "abcd" || r.Key != nil {
			t.Fatalf("record %d: %+v", count, r)
		}
		count++
		return true
	})
	if err != nil || count != n {
		t.Fatalf("decoded %d records: %v", count, err)
	}
}

func TestAppendLineBatchesRefuses(t *testing.T) {
	var e Encoder
	chunks := [][]byte{[]byte("x\n")}
	for _, opt := range []BatchOptions{{Codec: LZ4}, {KeepOffsets: true}, {LastOffsetDelta: 3}, {DeleteHorizonMs: 5}} {
		dst, ends, n, err := e.AppendLineBatches([]byte("p"), 0, chunks, opt, 1000, nil)
		if err == nil || string(dst) != "p" || len(ends) != 0 || n != 0 {
			t.Fatalf("%+v: %q %v %d %v", opt, dst, ends, n, err)
		}
	}
	for _, none := range [][][]byte{nil, {nil, []byte("no line end")}} {
		if dst, ends, n, err := e.AppendLineBatches([]byte("p"), 0, none, BatchOptions{}, 1000, nil); err != nil || string(dst) != "p" || len(ends) != 0 || n != 0 {
			t.Fatalf("no lines: %q %v %d %v", dst, ends, n, err)
		}
	}
}

// Lines stops when the loop over it does, and yields an empty line as an
// empty, non-nil slice.
func TestLinesStops(t *testing.T) {
	var got []string
	for line := range Lines([]byte("a\n\nb\nc\n")) {
		if line == nil {
			t.Fatal("nil line")
		}
		if got = append(got, string(line)); len(got) == 3 {
			break
		}
	}
	if fmt.Sprint(got) != "[a  b]" {
		t.Fatalf("%q", got)
	}
}

// AppendLineRecords: one record per line, value aliasing the text (empty
// lines give empty, non-nil values), the unfinished tail left out.
func TestAppendLineRecords(t *testing.T) {
	text := []byte("a\n\nbc\ntail")
	recs := AppendLineRecords([]Record{{Value: []byte("kept")}}, text)
	if len(recs) != 4 || string(recs[0].Value) != "kept" || string(recs[1].Value) != "a" ||
		recs[2].Value == nil || len(recs[2].Value) != 0 || string(recs[3].Value) != "bc" {
		t.Fatalf("%+v", recs)
	}
	if &recs[3].Value[0] != &text[3] || cap(recs[1].Value) != 1 {
		t.Fatal("values do not alias the text, or reach past their line")
	}
}
