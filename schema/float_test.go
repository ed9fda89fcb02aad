package schema

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// checkFloat: appendFloat writes a finite f as encoding/json writes the
// float64 (bits 64) or the float32 (bits 32).
func checkFloat(t *testing.T, f float64) {
	t.Helper()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return
	}
	want, _ := json.Marshal(f)
	if got := appendFloat([]byte("x"), f, 64); string(got) != "x"+string(want) {
		t.Fatalf("appendFloat(%v, 64) = %q, want %q", f, got[1:], want)
	}
	if f32 := float32(f); !math.IsInf(float64(f32), 0) {
		want, _ := json.Marshal(f32)
		if got := appendFloat(nil, float64(f32), 32); string(got) != string(want) {
			t.Fatalf("appendFloat(%v, 32) = %q, want %q", f32, got, want)
		}
	}
}

// decimalOf is n/10^k as a float64, the value a decimal n×10^-k reads as.
func decimalOf(n int64, k uint8) float64 {
	return float64(n) / math.Pow(10, float64(k%20))
}

// TestAppendFloat: decimals with few digits after the point (the short
// path) and other values, near the short path's bounds too.
func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 12.375, -12.375, 0.1, 0.2, 0.1 + 0.2, 1e-4, 9.9999e-5, 1.0001e-4,
		0.0001, 0.0005, 0.00012, 1e-6, 1e-7, 123456789012345, 999999999999999, 1e15, 1e15 - 0.5, 99999999999999.9, 9999999999999.99,
		99999999999.9999, 1e21, 1e20, 123456.7890, 3.14159, 2.5e-5, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2} {
		checkFloat(t, f)
		checkFloat(t, -f)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		n := rng.Int64N(1 << uint(rng.IntN(54)))
		if rng.IntN(2) == 0 {
			n = -n
		}
		checkFloat(t, decimalOf(n, uint8(rng.IntN(8))))
		checkFloat(t, math.Float64frombits(rng.Uint64()))
	}
}

// FuzzAppendFloat: appendFloat is encoding/json's float64 and float32
// text, for decimals n/10^k and for any bits.
func FuzzAppendFloat(f *testing.F) {
	f.Add(int64(12375), uint8(3), uint64(0))
	f.Add(int64(-5), uint8(4), math.Float64bits(0.1+0.2))
	f.Add(int64(999999999999999), uint8(0), math.Float64bits(1e-7))
	f.Fuzz(func(t *testing.T, n int64, k uint8, bits uint64) {
		checkFloat(t, decimalOf(n, k))
		checkFloat(t, math.Float64frombits(bits))
	})
}
