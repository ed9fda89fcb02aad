package keyindex

import (
	"fmt"
	"testing"

	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// benchLog holds 200,000 records over 20,000 keys in batches of 100.
func benchLog(b *testing.B) *memlog.Log {
	l := newLog(b)
	recs := make([]record.Record, 100)
	for i := 0; i < 2000; i++ {
		for j := range recs {
			n := i*100 + j
			recs[j] = record.Record{Key: fmt.Appendf(nil, "key-%05d", n%20000), Value: fmt.Appendf(nil, "value-%d", n)}
		}
		if _, err := l.Append(recs); err != nil {
			b.Fatal(err)
		}
		if i%200 == 199 {
			l.Roll()
		}
	}
	return l
}

// BenchmarkBuild measures the one scan that builds the index.
func BenchmarkBuild(b *testing.B) {
	l := benchLog(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := New(l)
		if n, err := x.Len(); err != nil || n != 20000 {
			b.Fatalf("Len %d, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200000, "ns/record")
}

// BenchmarkLatest measures a lookup (hash, map, one record read and key
// check) on a built index.
func BenchmarkLatest(b *testing.B) {
	x := New(benchLog(b))
	keys := make([][]byte, 20000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%05d", i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := x.Latest(keys[i%len(keys)]); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
