package record

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// A batch encoded with DefaultTimestampMs is byte for byte the batch of
// the same records with their timestamps <= 0 replaced by the default,
// for every codec, with timestamps missing first, last, everywhere or
// nowhere; a zero default writes timestamps as given.
func TestDefaultTimestamp(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const def = 1_764_410_400_000
	var e Encoder
	for _, codec := range []Codec{None, Gzip, Snappy, LZ4, Zstd} {
		for k, missing := range []func(i, n int) bool{
			func(i, n int) bool { return i == 0 },
			func(i, n int) bool { return i == n-1 },
			func(i, n int) bool { return true },
			func(i, n int) bool { return false },
			func(i, n int) bool { return rng.Intn(3) == 0 },
		} {
			n := 1 + rng.Intn(50)
			recs, filled := make([]Record, n), make([]Record, n)
			for i := range recs {
				recs[i] = Record{Timestamp: def - 5000 + int64(rng.Intn(10000)), Value: []byte(fmt.Sprint("line ", i))}
				if i%4 == 1 {
					recs[i].Key = []byte("k")
					recs[i].Headers = []Header{{Key: "h", Value: []byte("v")}}
				}
				if missing(i, n) {
					recs[i].Timestamp = -int64(rng.Intn(2)) // 0 or -1
				}
				filled[i] = recs[i]
				if filled[i].Timestamp <= 0 {
					filled[i].Timestamp = def
				}
			}
			got, err := e.AppendBatch(nil, 7, recs, BatchOptions{Codec: codec, DefaultTimestampMs: def})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := e.AppendBatch(nil, 7, filled, BatchOptions{Codec: codec})
			if !bytes.Equal(got, want) {
				t.Fatalf("%s case %d: the default timestamp encodes differently", codec, k)
			}
			asGiven, _ := e.AppendBatch(nil, 7, recs, BatchOptions{Codec: codec})
			zero, _ := e.AppendBatch(nil, 7, recs, BatchOptions{Codec: codec, DefaultTimestampMs: 0})
			if !bytes.Equal(asGiven, zero) {
				t.Fatalf("%s case %d: a zero default changes the batch", codec, k)
			}
		}
	}
}
