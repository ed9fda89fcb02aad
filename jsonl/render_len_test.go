package jsonl

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/partfs/partfs/record"
)

// checkJSONLenAt: a record measured once (at offset 0, timestamp 0) has at
// every offset and timestamp the length Append renders there.
func checkJSONLenAt(t *testing.T, r record.Record, offsets, timestamps []int64) {
	t.Helper()
	m := r
	m.Offset, m.Timestamp = 0, 0
	fields := FieldsLen(&m)
	for _, off := range offsets {
		for _, ts := range timestamps {
			r.Offset, r.Timestamp = off, ts
			out := Append(nil, &r)
			if n := LenAt(fields, off, ts); n != int64(len(out)) {
				t.Fatalf("LenAt %d, rendered %d: %s", n, len(out), out)
			}
			if n := Len(&r); n != int64(len(out)) {
				t.Fatalf("Len %d, rendered %d: %s", n, len(out), out)
			}
		}
	}
}

var edgeInts = []int64{0, 1, 9, 10, -1, -10, 999, 1000, 1764410400000, math.MaxInt64, math.MinInt64}

func TestJSONLenAtVaried(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \"\\\n\r\t\x00\x1f\x7f\x80\xff\xe2\x80\xa8\xc3\xa9")
	bytesOf := func() []byte {
		if rng.IntN(8) == 0 {
			return nil
		}
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for i := 0; i < 2000; i++ {
		r := record.Record{Key: bytesOf(), Value: bytesOf()}
		for h := rng.IntN(3); h > 0; h-- {
			r.Headers = append(r.Headers, record.Header{Key: string(bytesOf()), Value: bytesOf()})
		}
		checkJSONLenAt(t, r, []int64{rng.Int64(), -rng.Int64N(1e6)}, []int64{rng.Int64N(1e13), -1})
	}
	checkJSONLenAt(t, record.Record{Value: []byte("line")}, edgeInts, edgeInts)
	// Log lines (no key, no headers) of every length around the word
	// sizes, plain or with one byte to escape at the end.
	for n := 0; n <= 70; n++ {
		for _, last := range []string{"", "~", "\x7f", `"`, "\x1f", "\xc3\xa9", "\xff"} {
			v := []byte(strings.Repeat("a", n) + last)
			checkJSONLenAt(t, record.Record{Value: v}, []int64{12345}, []int64{1764410400000})
			checkJSONLenAt(t, record.Record{Value: v, Headers: []record.Header{}}, []int64{1}, []int64{-1})
		}
	}
	checkJSONLenAt(t, record.Record{}, []int64{0}, []int64{0})
}

// FuzzJSONLenAt: FieldsLen does not depend on the offset or timestamp.
func FuzzJSONLenAt(f *testing.F) {
	f.Add([]byte("k"), []byte("plain line"), "h", []byte("\u2028\x01\""), int64(12345), int64(1764410400000))
	f.Add([]byte(nil), []byte{0xff}, "\x00", []byte(nil), int64(-1), int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, key, value []byte, hk string, hv []byte, off, ts int64) {
		r := record.Record{Key: key, Value: value, Headers: []record.Header{{Key: hk, Value: hv}}}
		checkJSONLenAt(t, r, []int64{off, 0}, []int64{ts, -1})
	})
}
