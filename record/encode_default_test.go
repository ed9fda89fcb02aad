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

// AppendBatches gives the bytes of AppendBatch over greedy cuts: each
// batch takes records while it stays within the limit (at least one), for
// records of every shape, default and LogAppendTime timestamps, and limits
// from below one record to above all of them.
func TestAppendBatchesMatchesGreedyCuts(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	var e Encoder
	for round := 0; round < 60; round++ {
		n := 1 + rng.Intn(300)
		recs := make([]Record, n)
		for i := range recs {
			r := &recs[i]
			r.Timestamp = 1_764_410_400_000 + int64(rng.Intn(100_000)) - 50_000
			if rng.Intn(6) == 0 {
				r.Timestamp = 0
			}
			if rng.Intn(5) > 0 {
				r.Value = make([]byte, rng.Intn([]int{10, 200, 3000}[round%3]))
			}
			if rng.Intn(4) == 0 {
				r.Key = []byte(fmt.Sprint("key", i))
			}
			if rng.Intn(5) == 0 {
				r.Headers = []Header{{Key: "h", Value: []byte("v")}, {Key: "n"}}
			}
		}
		opt := BatchOptions{DefaultTimestampMs: 1_764_410_450_000}
		if round%4 == 3 {
			opt.LogAppendTime, opt.LogAppendTimeMs = true, 1_764_410_460_000
		}
		limit := []int{80, 500, 4000, 70000, 1 << 30}[rng.Intn(5)]
		base := int64(rng.Intn(1000))
		var want []byte
		var wantEnds []int
		for from := 0; from < n; {
			k := 1
			for from+k < n {
				b, _ := e.AppendBatch(nil, 0, recs[from:from+k+1], opt)
				if len(b) > limit {
					break
				}
				k++
			}
			var err error
			if want, err = e.AppendBatch(want, base+int64(from), recs[from:from+k], opt); err != nil {
				t.Fatal(err)
			}
			wantEnds = append(wantEnds, len(want))
			from += k
		}
		got, ends, err := e.AppendBatches([]byte("pre"), base, recs, opt, limit, []int{-1})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[3:], want) {
			t.Fatalf("round %d (limit %d): AppendBatches differs from AppendBatch over greedy cuts", round, limit)
		}
		for i := range wantEnds {
			wantEnds[i] += 3
		}
		if fmt.Sprint(ends) != fmt.Sprint(append([]int{-1}, wantEnds...)) {
			t.Fatalf("round %d: ends %v, want %v", round, ends, wantEnds)
		}
	}
}

func TestAppendBatchesRefuses(t *testing.T) {
	var e Encoder
	recs := []Record{{Value: []byte("x")}}
	for _, opt := range []BatchOptions{{Codec: LZ4}, {KeepOffsets: true}, {LastOffsetDelta: 3}, {DeleteHorizonMs: 5}} {
		dst, ends, err := e.AppendBatches([]byte("p"), 0, recs, opt, 1000, nil)
		if err == nil || string(dst) != "p" || len(ends) != 0 {
			t.Fatalf("%+v: %q %v %v", opt, dst, ends, err)
		}
	}
	if dst, ends, err := e.AppendBatches([]byte("p"), 0, nil, BatchOptions{}, 1000, nil); err != nil || string(dst) != "p" || len(ends) != 0 {
		t.Fatalf("no records: %q %v %v", dst, ends, err)
	}
}
