package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/vfs"
)

// copyDir copies the regular files of src into dst.
func copyDir(b *testing.B, src, dst string) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCleanOpen1000 opens a data directory of 1,000 partitions with 3
// segments each after a clean shutdown (Close is not timed).
func BenchmarkCleanOpen1000(b *testing.B) {
	dir := benchDir(b)
	cfg := map[string]string{"segment.bytes": "40000"}
	st, l := benchLogBatches(b, dir, 800, 100, cfg)
	if n := len(segmentBases(l)); n != 3 {
		b.Fatalf("%d segments, want 3", n)
	}
	st.Close()
	offsets := map[checkpoint.TopicPartition]int64{}
	for p := 1; p < 1000; p++ {
		copyDir(b, filepath.Join(dir, "t-0"), filepath.Join(dir, fmt.Sprintf("t-%d", p)))
	}
	for p := 0; p < 1000; p++ {
		offsets[checkpoint.TopicPartition{Topic: "t", Partition: p}] = 800
	}
	if err := checkpoint.WriteOffsets(vfs.Default, filepath.Join(dir, kafkaname.RecoveryPointFile), offsets); err != nil {
		b.Fatal(err)
	}
	var reads readCounter
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := Open(dir, Options{NoBackground: true, Defaults: cfg, FS: vfs.NewErrorFS(vfs.Default, &reads)})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if n := len(st.Logs()); n != 1000 {
			b.Fatalf("%d partitions", n)
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(reads.n.Load())/float64(b.N), "segment-reads/open")
}

// BenchmarkUncleanOpen measures recovery of the bytes after the recovery
// point at two sizes; the cost should be proportional to them.
func BenchmarkUncleanOpen(b *testing.B) {
	for _, n := range []int{100_000, 400_000} {
		b.Run(fmt.Sprintf("%dMB", n*131/1000/1000), func(b *testing.B) {
			dir := benchDir(b)
			st, l := benchLog(b, dir, n, map[string]string{"segment.bytes": "16000000"})
			size := l.Stats().SizeBytes
			st.Close()
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				os.Remove(filepath.Join(dir, kafkaname.CleanShutdownFile))
				os.Remove(filepath.Join(dir, kafkaname.RecoveryPointFile))
				b.StartTimer()
				st, err := Open(dir, Options{NoBackground: true})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				l, _ := st.Log("t", 0)
				if l.EndOffset() != int64(n) {
					b.Fatalf("end %d", l.EndOffset())
				}
				st.Close()
				b.StartTimer()
			}
		})
	}
}
