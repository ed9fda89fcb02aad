// Package benchutil holds what the benchmarks of several packages share:
// running ours and a baseline alternately on the same bytes and reporting
// the ratio, and the log lines the codec and rendering benchmarks use.
package benchutil

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// Alternate runs each of fns once, then b.N rounds calling each in turn,
// timing every call, so machine noise hits all of them alike; it returns
// each one's median call time times b.N (medians, so that a call another
// process's burst or a collection stalled counts as one round, not as its
// length).
func Alternate(b *testing.B, fns ...func()) []time.Duration {
	for _, fn := range fns {
		fn()
	}
	runtime.GC()
	calls := make([][]time.Duration, len(fns))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, fn := range fns {
			t0 := time.Now()
			fn()
			calls[j] = append(calls[j], time.Since(t0))
		}
	}
	b.StopTimer()
	total := make([]time.Duration, len(fns))
	for j, c := range calls {
		slices.Sort(c)
		total[j] = c[len(c)/2] * time.Duration(b.N)
	}
	return total
}

// ReportOurs reports ns/op and MB/s of ours (overriding the framework's,
// which would count every function Alternate ran).
func ReportOurs(b *testing.B, bytes int, ours time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(ours.Nanoseconds())/n, "ns/op")
	b.ReportMetric(float64(bytes)*n/ours.Seconds()/1e6, "MB/s")
}

// RunPair runs ours and the baseline (the building block on the same
// bytes) alternately; it reports ours, the baseline's MB/s and the ratio
// ours/baseline speed (x-baseline; 1.0 = as fast).
func RunPair(b *testing.B, bytes int, ours, base func()) {
	t := Alternate(b, ours, base)
	ReportOurs(b, bytes, t[0])
	b.ReportMetric(float64(bytes)*float64(b.N)/t[1].Seconds()/1e6, "base-MB/s")
	b.ReportMetric(t[1].Seconds()/t[0].Seconds(), "x-baseline")
}

// LogLine is the i-th of the benchmarks' ~120-byte log lines.
func LogLine(i int) string {
	levels := []string{"INFO ", "WARN ", "DEBUG", "ERROR"}
	return fmt.Sprintf("2026-11-30T01:%02d:%02d.%03dZ %s [worker-%d] request handled path=/api/v1/items/%d status=%d dur_ms=%d",
		i/60000%60, i/1000%60, i%1000, levels[i%4], i%16, 100000+i*7919%900000, 200+i%3*100, i%97)
}
