package logstore

import (
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// benchRecords returns n records with 120-byte values of mixed text.
func benchRecords(n int) []record.Record {
	rs := make([]record.Record, n)
	rng := rand.New(rand.NewSource(1))
	words := []string{"alpha ", "beta ", "gamma ", "delta ", "order=", "user=", "42 ", "ok "}
	for i := range rs {
		v := make([]byte, 0, 120)
		for len(v) < 120 {
			v = append(v, words[rng.Intn(len(words))]...)
		}
		rs[i] = record.Record{Timestamp: 1_764_410_400_000 + int64(i), Value: v[:120]}
	}
	return rs
}

// plainWriteNs measures writing total bytes in chunks of size chunk to a
// file in dir with write(2): the baseline of the same bytes.
func plainWriteNs(b *testing.B, dir string, chunk []byte, total int64) time.Duration {
	f, err := os.Create(filepath.Join(dir, "plain"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	for written := int64(0); written < total; written += int64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

func BenchmarkAppend(b *testing.B) {
	for _, codec := range []string{"none", "lz4"} {
		b.Run(codec, func(b *testing.B) { benchAppend(b, codec) })
	}
}

// benchDir is where benchmarks write: $PARTFS_BENCH_DIR (e.g. /dev/shm to
// take the disk's writeback out of the numbers) or a test temp dir.
func benchDir(b *testing.B) string {
	if d := os.Getenv("PARTFS_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// appendLog opens a store in benchDir with partition t-0 compressed with
// codec, closed when the benchmark ends.
func appendLog(b *testing.B, codec string) (string, *Log) {
	dir := benchDir(b)
	st, l := openAt(b, dir, Options{NoBackground: true, Defaults: map[string]string{"compression.type": codec}})
	b.Cleanup(func() { st.Close() })
	return dir, l
}

func benchAppend(b *testing.B, codec string) {
	dir, l := appendLog(b, codec)
	rs := benchRecords(1000)
	var enc record.Encoder
	batch, _ := enc.AppendBatch(nil, 0, rs, record.BatchOptions{})
	b.SetBytes(int64(len(batch))) // logical bytes: the uncompressed batch
	// baseline first: write(2) of the same logical bytes (the uncompressed
	// batches) to a plain file, which is then removed
	base := plainWriteNs(b, dir, batch, int64(len(batch))*int64(b.N))
	os.Remove(filepath.Join(dir, "plain"))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(rs); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	written := l.Stats().SizeBytes
	b.ReportMetric(float64(b.N)*1000/elapsed.Seconds()/1e6, "Mrec/s")
	b.ReportMetric(float64(written)/elapsed.Seconds()/1e6, "diskMB/s")
	b.ReportMetric(base.Seconds()/elapsed.Seconds(), "x-plain-write")
}

// benchLog builds a log of n 120-byte records in batches of 1000 in dir.
func benchLog(b *testing.B, dir string, n int, cfg map[string]string) (*Store, *Log) {
	return benchLogBatches(b, dir, n, 1000, cfg)
}

func benchLogBatches(b *testing.B, dir string, n, per int, cfg map[string]string) (*Store, *Log) {
	st, err := Open(dir, Options{NoBackground: true, Defaults: cfg})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Partitions("t"); err != nil {
		st.CreateTopic("t")
	}
	l, _ := st.Log("t", 0)
	rs := benchRecords(per)
	for done := int(l.EndOffset()); done < n; done += per {
		for i := range rs {
			rs[i].Timestamp = 1_764_410_400_000 + int64(done+i)
		}
		if _, err := l.Append(rs); err != nil {
			b.Fatal(err)
		}
	}
	return st, l
}

func BenchmarkSequentialRead(b *testing.B) {
	st, l := benchLog(b, benchDir(b), 500_000, nil)
	defer st.Close()
	size := l.Stats().SizeBytes
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		segs, release := l.Segments()
		n := 0
		for _, s := range segs {
			if err := l.Read(s, s.Base, func(r *record.Record) bool { n += len(r.Value); return true }); err != nil {
				b.Fatal(err)
			}
		}
		release()
	}
	b.StopTimer()
	// baseline: reading the same bytes from the page cache with pread
	start := time.Now()
	buf := make([]byte, 1<<20)
	segs, release := l.Segments()
	for _, s := range segs {
		f, _ := os.Open(segmentPath(l.dir, s.Base, kafkaname.LogSuffix))
		for pos := int64(0); pos < s.Size; pos += int64(len(buf)) {
			f.ReadAt(buf, pos)
		}
		f.Close()
	}
	release()
	base := time.Since(start)
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(l.EndOffset())/perOp.Seconds()/1e6, "Mrec/s")
	b.ReportMetric(base.Seconds()/perOp.Seconds(), "x-plain-pread")
}

// BenchmarkLookup measures, on a log of 10 M records in batches of 1000
// and of 1 M records in batches of 10 (one batch per write() of a few
// lines), reporting p50/p99:
//   - offset: Locate, Kafka's offset lookup (index + header-only scan to
//     the batch holding the offset; no payload read);
//   - first-record: Read of the first record at a random offset (reads
//     and CRC-checks the whole batch holding it);
//   - time: OffsetForTime of a random record's timestamp.
func BenchmarkLookup(b *testing.B) {
	b.Run("batch1000", func(b *testing.B) { benchLookup(b, 10_000_000, 1000) })
	b.Run("batch10", func(b *testing.B) { benchLookup(b, 1_000_000, 10) })
}

func benchLookup(b *testing.B, n, per int) {
	st, l := benchLogBatches(b, benchDir(b), n, per, nil)
	defer st.Close()
	rng := rand.New(rand.NewSource(2))
	segs, release := l.Segments()
	defer release()
	bases := make([]int64, len(segs))
	for i, s := range segs {
		bases[i] = s.Base
	}
	end := l.EndOffset()
	b.Run("offset", func(b *testing.B) {
		b.ReportAllocs()
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			off := rng.Int63n(end)
			start := time.Now()
			seg, pos, err := l.Locate(off)
			lat = append(lat, time.Since(start))
			if err != nil || off < seg.Base || off >= seg.Next || pos < 0 || pos >= seg.Size {
				b.Fatalf("Locate(%d) = %+v %d %v", off, seg, pos, err)
			}
		}
		reportPercentiles(b, lat)
	})
	b.Run("first-record", func(b *testing.B) {
		b.ReportAllocs()
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			off := rng.Int63n(end)
			start := time.Now()
			j := sort.Search(len(bases), func(k int) bool { return bases[k] > off }) - 1
			found := false
			l.Read(segs[j], off, func(r *record.Record) bool { found = r.Offset == off; return false })
			lat = append(lat, time.Since(start))
			if !found {
				b.Fatalf("offset %d not found", off)
			}
		}
		reportPercentiles(b, lat)
	})
	b.Run("time", func(b *testing.B) {
		b.ReportAllocs()
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			ts := 1_764_410_400_000 + rng.Int63n(end)
			start := time.Now()
			off, err := l.OffsetForTime(ts)
			lat = append(lat, time.Since(start))
			if err != nil || off != ts-1_764_410_400_000 {
				b.Fatalf("OffsetForTime(%d) = %d %v", ts, off, err)
			}
		}
		reportPercentiles(b, lat)
	})
	b.ReportMetric(float64(end), "records")
	_ = partlog.Latest
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1000, "p99-µs")
}
