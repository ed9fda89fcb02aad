package compact_test

import (
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// buildBenchStore writes ~size bytes of ~120-byte records over 100,000
// keys (batches of 100) into a compacted topic on disk.
func buildBenchStore(b *testing.B, dir string, size int64) int64 {
	st, err := logstore.Open(dir, logstore.Options{NoBackground: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.CreateTopic("bench"); err != nil {
		b.Fatal(err)
	}
	err = st.SetTopicConfig("bench", []partlog.KV{{Key: "cleanup.policy", Value: "compact"}, {Key: "segment.bytes", Value: strconv.Itoa(128 << 20)}})
	if err != nil {
		b.Fatal(err)
	}
	l, _ := st.Log("bench", 0)
	rng := rand.New(rand.NewSource(1))
	recs := make([]record.Record, 100)
	value := make([]byte, 96)
	for l.Stats().SizeBytes < size {
		for i := range recs {
			rng.Read(value[:16])
			recs[i] = record.Record{Timestamp: 1700000000000, Key: fmt.Appendf(nil, "key-%06d", rng.Intn(100000)), Value: append([]byte(nil), value...)}
		}
		if _, err := l.Append(recs); err != nil {
			b.Fatal(err)
		}
	}
	// one more segment so that everything written is sealed (cleanable)
	if err := st.SetTopicConfig("bench", []partlog.KV{{Key: "segment.ms", Value: "1"}}); err != nil {
		b.Fatal(err)
	}
	last := recs[0]
	last.Timestamp += 10000
	if _, err := l.Append([]record.Record{last}); err != nil {
		b.Fatal(err)
	}
	n := l.Stats().SizeBytes
	if segs := l.Stats().Segments; segs < 2 {
		b.Fatalf("%d segments: nothing sealed", segs)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

func benchSize() int64 {
	if f := flag.Lookup("clean.bytes"); f != nil {
		n, _ := strconv.ParseInt(f.Value.String(), 10, 64)
		return n
	}
	return 64 << 20
}

// BenchmarkCleanStore cleans a log on disk through logstore: MB/s of log,
// and the cost of a second pass right after (nothing dirty: nothing done).
func BenchmarkCleanStore(b *testing.B) {
	base := filepath.Join(b.TempDir(), "base")
	size := buildBenchStore(b, base, benchSize())
	b.SetBytes(size)
	b.ResetTimer()
	var first, second time.Duration
	var full reclean
	var sum compact.Summary
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		work := filepath.Join(b.TempDir(), fmt.Sprint(i))
		copyTreeB(b, base, work)
		st, err := logstore.Open(work, logstore.Options{NoBackground: true})
		if err != nil {
			b.Fatal(err)
		}
		c := compact.NewCleaner(compact.Options{})
		b.StartTimer()
		t0 := time.Now()
		if sum, err = c.CleanAll(compact.Targets(st), false); err != nil || sum.Cleaned != 1 {
			b.Fatalf("clean: %v %+v", err, sum)
		}
		first = time.Since(t0)
		b.StopTimer()
		t1 := time.Now()
		again, err := c.CleanAll(compact.Targets(st), false)
		second = time.Since(t1)
		if err != nil || again.Cleaned != 0 {
			b.Fatalf("second pass: %v %+v", err, again)
		}
		full = recleanFromStart(b, st)
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(sum.RecordsRemoved), "removed")
	b.ReportMetric(float64(sum.BytesWritten), "written-B")
	b.ReportMetric(float64(sum.BytesRead)/first.Seconds()/1e6, "read-MB/s")
	b.ReportMetric(float64(second.Microseconds()), "second-pass-µs")
	b.ReportMetric(second.Seconds()/first.Seconds(), "second/first")
	b.ReportMetric(float64(full.took.Milliseconds()), "reclean-ms")
	b.ReportMetric(float64(full.sum.BytesRead), "reclean-read-B")
}

// reclean is a cleaning of an already clean log from its start.
type reclean struct {
	took time.Duration
	sum  compact.Summary
}

// recleanFromStart resets the cleaner checkpoint of the cleaned log and
// cleans it again in full: nothing may change (every batch is copied).
func recleanFromStart(b *testing.B, st *logstore.Store) reclean {
	l, _ := st.Log("bench", 0)
	if err := l.SetCleanerCheckpoint(0); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	sum, err := compact.NewCleaner(compact.Options{}).CleanAll(compact.Targets(st), true)
	took := time.Since(t0)
	if err != nil || sum.RecordsRemoved != 0 || sum.BatchesRebuilt != 0 {
		b.Fatalf("re-cleaning a clean log changed it: %v %+v", err, sum)
	}
	return reclean{took, sum}
}
