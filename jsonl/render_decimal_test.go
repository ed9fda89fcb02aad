package jsonl

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// TestAppendDecimal: AppendInt is strconv.AppendInt for every digit
// count and sign, around every power of ten, at the int64 limits, and for
// every value of each 4-digit lane of an 8-digit group.
func TestAppendDecimal(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 99, 100, 1e8 - 1, 1e8, 1e16 - 1, 1e16, 1764410400000,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for p := int64(1); p <= 1e18; p *= 10 {
		vs = append(vs, p-1, p, p+1, -p, -p+1, -p-1)
	}
	for i := int64(0); i < 10000; i++ {
		vs = append(vs, i, i*10000, i*10001, 99999999-i, 1e8+i*10000, 1e16+i)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		vs = append(vs, rng.Int63()>>rng.Intn(63), -rng.Int63()>>rng.Intn(63))
	}
	for _, v := range vs {
		if got, want := string(AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("AppendInt(%d) = %q, want %q", v, got, want)
		}
	}
}
