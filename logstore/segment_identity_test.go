package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// TestSegmentChangedUnderTheLog: after another process truncates the
// active segment, replaces it under its name or gives it a second name,
// the next append and flush fail with ErrCorrupt, the close leaves no
// clean-shutdown marker, and the next open recovers the partition.
func TestSegmentChangedUnderTheLog(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, path string){
		"truncated": func(t *testing.T, path string) { must(t, os.Truncate(path, 100)) },
		"grown": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			f.Write([]byte("junk"))
			f.Close()
		},
		"replaced": func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			must(t, err)
			must(t, os.WriteFile(path+".tmp", b, 0o644))
			must(t, os.Rename(path+".tmp", path))
		},
		"linked": func(t *testing.T, path string) { must(t, os.Link(path, path+".other")) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			opt := testOptions(vfs.NewBudgetFS(vfs.Beneath(dir), 1), newClock(), nil)
			st, l := openAt(t, dir, opt)
			if _, err := l.Append(recs(20, "a", 1000)); err != nil {
				t.Fatal(err)
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			st.CreateTopic("other") // evicts t-0's descriptors (budget 1)
			change(t, segmentPath(filepath.Join(dir, "t-0"), 0, kafkaname.LogSuffix))
			if _, err := l.Append(recs(1, "b", 2000)); !errors.Is(err, partlog.ErrCorrupt) {
				t.Fatalf("append after the change: %v, want ErrCorrupt", err)
			}
			if err := l.Sync(); !errors.Is(err, partlog.ErrCorrupt) {
				t.Fatalf("flush after the change: %v, want ErrCorrupt", err)
			}
			if err := st.Close(); err == nil {
				t.Fatal("close reported no error")
			}
			if _, err := os.Stat(filepath.Join(dir, kafkaname.CleanShutdownFile)); err == nil {
				t.Fatal("a clean-shutdown marker was written")
			}
			opt = testOptions(vfs.NewBudgetFS(vfs.Beneath(dir), 1), newClock(), nil)
			if name == "linked" { // the partition stays closed: a file with two names is not written
				st, err := Open(dir, opt)
				must(t, err)
				defer st.Close()
				if _, err := st.Log("t", 0); !errors.Is(err, partlog.ErrCorrupt) {
					t.Fatalf("t-0 with a linked segment: %v", err)
				}
				return
			}
			st, l = openAt(t, dir, opt)
			defer st.Close()
			got, err := l.Append(recs(1, "c", 3000))
			if err != nil || got != l.EndOffset()-1 {
				t.Fatalf("append after recovery: %d %v", got, err)
			}
			if n := len(readLog(t, l, 0)); int64(n) != l.EndOffset() {
				t.Fatalf("read %d records, end %d", n, l.EndOffset())
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCheckUnchanged: the cost of the check an append makes (one
// fstat through the BudgetFS), and its share of an append of one
// small record to an OS file, measured in the same run (x-share).
func BenchmarkCheckUnchanged(b *testing.B) {
	dir := benchDir(b)
	st, l := openAt(b, dir, Options{NoBackground: true, FS: vfs.NewBudgetFS(vfs.Beneath(dir), 1024)})
	defer st.Close()
	one := recs(1, "x", 1000)
	start := nowNanos()
	const n = 20000
	for i := 0; i < n; i++ {
		if _, err := l.Append(one); err != nil {
			b.Fatal(err)
		}
	}
	perAppend := float64(nowNanos()-start) / n
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.mu.Lock()
		err := l.checkUnchanged()
		l.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perCheck := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perAppend, "ns/append")
	b.ReportMetric(perCheck/perAppend, "x-share")
}

func nowNanos() int64 { return time.Now().UnixNano() }
