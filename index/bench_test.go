package index

import (
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/partfs/partfs/vfs"
)

// benchIndex builds an offset index of n entries, one per batch of
// recsPerEntry records of 120 bytes, in memory.
func benchIndex(b *testing.B, n, recsPerEntry int) (*OffsetIndex, []int64) {
	mem := vfs.NewCrashFS()
	f, _ := mem.Create("/b.index")
	ox, err := OpenOffsetIndex(f, 0, (n+1)*OffsetEntrySize)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]int64, n)
	for i := 0; i < n; i++ {
		keys[i] = int64((i + 1) * recsPerEntry)
		if err := ox.Append(keys[i], int32(int64(i)*int64(recsPerEntry)*120%(1<<31-1))); err != nil {
			b.Fatal(err)
		}
	}
	ox.Lookup(0) // load: the benchmark measures warm lookups
	return ox, keys
}

// BenchmarkOffsetLookup measures a random warm lookup, with the ratio to a
// plain sort.Search over an []int64 of the same keys in the same run.
// 10 M records in batches of 1000 give 10 000 entries; 1 310 720 is a full
// default-sized index.
func BenchmarkOffsetLookup(b *testing.B) {
	for _, c := range []struct {
		name          string
		entries, recs int
	}{{"10Mrecords-batch1000", 10_000, 1000}, {"full-index", 1_310_720, 8}} {
		b.Run(c.name, func(b *testing.B) {
			ox, keys := benchIndex(b, c.entries, c.recs)
			last := keys[len(keys)-1]
			rng := rand.New(rand.NewSource(1))
			targets := make([]int64, 4096)
			for i := range targets {
				targets[i] = rng.Int63n(last + 1)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ox.Lookup(targets[i&4095])
			}
			b.StopTimer()
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			start := time.Now()
			sink := 0
			for i := 0; i < b.N; i++ {
				t := targets[i&4095]
				sink += sort.Search(len(keys), func(j int) bool { return keys[j] > t })
			}
			base := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			_ = sink
			b.ReportMetric(base, "baseline-ns/op")
			b.ReportMetric(perOp/base, "x-baseline")
			p50, p99 := lookupPercentiles(ox, targets)
			b.ReportMetric(p50, "p50-ns")
			b.ReportMetric(p99, "p99-ns")
		})
	}
}

// lookupPercentiles times single lookups (clock overhead included).
func lookupPercentiles(ox *OffsetIndex, targets []int64) (p50, p99 float64) {
	d := make([]float64, len(targets))
	for i, t := range targets {
		start := time.Now()
		ox.Lookup(t)
		d[i] = float64(time.Since(start).Nanoseconds())
	}
	sort.Float64s(d)
	return d[len(d)/2], d[len(d)*99/100]
}

// BenchmarkTimeLookup measures a random warm time index lookup.
func BenchmarkTimeLookup(b *testing.B) {
	mem := vfs.NewCrashFS()
	f, _ := mem.Create("/b.timeindex")
	const n = 10_000
	tx, _ := OpenTimeIndex(f, 0, (n+2)*TimeEntrySize)
	for i := 1; i <= n; i++ {
		tx.MaybeAppend(int64(1_700_000_000_000+i*1000), int64(i*1000), false)
	}
	rng := rand.New(rand.NewSource(2))
	targets := make([]int64, 4096)
	for i := range targets {
		targets[i] = 1_700_000_000_000 + rng.Int63n(n*1000)
	}
	tx.Lookup(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx.Lookup(targets[i&4095])
	}
}

// BenchmarkOffsetAppend measures appending entries to a real file, with
// the ratio to plain 8-byte pwrites of the same bytes in the same run.
func BenchmarkOffsetAppend(b *testing.B) {
	dir := b.TempDir()
	f, err := vfs.Default.Create(dir + "/a.index")
	if err != nil {
		b.Fatal(err)
	}
	ox, _ := OpenOffsetIndex(f, 0, (b.N+1)*OffsetEntrySize)
	b.SetBytes(OffsetEntrySize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := ox.Append(int64(i+1), int32(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	raw, _ := vfs.Default.Create(dir + "/raw")
	var buf [OffsetEntrySize]byte
	start := time.Now()
	for i := 0; i < b.N; i++ {
		raw.WriteAt(EncodeOffsetEntry(buf[:0], int32(i+1), int32(i)), int64(i)*OffsetEntrySize)
	}
	base := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/base, "x-pwrite")
	ox.Close()
	raw.Close()
}
