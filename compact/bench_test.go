package compact

import (
	"flag"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/partfs/partfs/record"
)

var benchLogBytes = flag.Int64("clean.bytes", 64<<20, "log size for the cleaning benchmarks (1073741824 for a 1 GiB log)")

const (
	benchKeys       = 100000
	benchPerBatch   = 100
	benchSegBytes   = 128 << 20
	benchRecordSize = 120 // bytes of one record in the batch, about
)

// benchLog builds a log of ~size bytes of ~120-byte records over 100,000
// keys, in batches of 100, sealed in 128 MiB segments.
func benchLog(b *testing.B, size int64, codec record.Codec) *memTarget {
	m := newMemTarget(b)
	rng := rand.New(rand.NewSource(1))
	value := make([]byte, 96)
	recs := make([]record.Record, benchPerBatch)
	var enc record.Encoder
	var total int64
	for total < size {
		for i := range recs {
			rng.Read(value[:16])
			recs[i] = record.Record{Timestamp: 1700000000000, Key: fmt.Appendf(nil, "key-%06d", rng.Intn(benchKeys)), Value: append([]byte(nil), value...)}
		}
		a := m.segs[len(m.segs)-1]
		n := len(a.data)
		var err error
		if a.data, err = enc.AppendBatch(a.data, m.end, recs, record.BatchOptions{Codec: codec}); err != nil {
			b.Fatal(err)
		}
		a.maxTs = 1700000000000
		total += int64(len(a.data) - n)
		m.end += benchPerBatch
		if len(a.data) >= benchSegBytes {
			m.roll()
		}
	}
	m.roll()
	return m
}

func logBytes(m *memTarget) int64 {
	var n int64
	for _, s := range m.segs {
		n += int64(len(s.data))
	}
	return n
}

// BenchmarkClean cleans the benchmark log once per iteration (a fresh copy
// each time) and reports MB/s of log, records removed, and the offset
// map's bytes per key. BenchmarkScanBaseline is the same bytes read and
// decoded once without cleaning.
func BenchmarkClean(b *testing.B) {
	for _, bc := range []struct {
		name     string
		codec    record.Codec
		mapBytes int64
	}{
		{"none/map=128MiB", record.None, DefaultDedupeBufferSize},
		{"lz4/map=128MiB", record.LZ4, DefaultDedupeBufferSize},
		{"none/map=3MiB", record.None, 3 << 20}, // just enough for 100,000 keys at 0.9
	} {
		b.Run(bc.name, func(b *testing.B) {
			src := benchLog(b, *benchLogBytes, bc.codec)
			size := logBytes(src)
			b.SetBytes(size)
			c := NewCleaner(Options{DedupeBufferSize: bc.mapBytes, Now: func() time.Time { return time.UnixMilli(1800000000000) }})
			b.ResetTimer()
			var st Stats
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m := cloneTarget(src)
				b.StartTimer()
				var err error
				if st, err = c.Clean(m, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.RecordsRemoved), "removed")
			b.ReportMetric(float64(st.Rounds), "rounds")
			b.ReportMetric(float64(c.offsets.Len()), "keys")
			b.ReportMetric(float64(c.offsets.UsedBytes())/float64(c.offsets.Len()), "map-used-B/key")
			b.ReportMetric(float64(st.MapGrowths), "map-growths")
		})
	}
}

// BenchmarkCleanSecondPass measures a second Clean of an already cleaned
// log: it finds nothing dirty and does nothing.
func BenchmarkCleanSecondPass(b *testing.B) {
	m := benchLog(b, *benchLogBytes, record.None)
	b.SetBytes(logBytes(m))
	c := NewCleaner(Options{})
	if _, err := c.Clean(m, false); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st, err := c.Clean(m, false); err != nil || st != (Stats{}) {
			b.Fatalf("second pass did %+v, %v", st, err)
		}
	}
}

// BenchmarkScanBaseline reads and decodes every record of the benchmark
// log once (what any full pass costs at least).
func BenchmarkScanBaseline(b *testing.B) {
	m := benchLog(b, *benchLogBytes, record.None)
	b.SetBytes(logBytes(m))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var dec record.Decoder
		n := 0
		for _, s := range m.segs {
			sc := record.NewBytesScanner(s.data, "bench")
			for sc.Next() {
				if err := dec.Records(sc.Batch(), func(r *record.Record) bool { n += len(r.Key); return true }); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

func cloneTarget(m *memTarget) *memTarget {
	return &memTarget{t: m.t, segs: append([]*memSeg(nil), m.segs...), end: m.end, cfg: m.cfg, nextID: m.nextID}
}
