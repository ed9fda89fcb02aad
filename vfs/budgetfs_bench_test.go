package vfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchPair times op on a plain *os.File and on a BudgetFS file of the same
// data in the same run and reports both and their ratio.
func benchPair(b *testing.B, size int, budget int, op func(f File, buf []byte, i int) error) {
	dir := b.TempDir()
	buf := make([]byte, size)
	direct, err := Default.OpenFile(filepath.Join(dir, "direct"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	c := newBudgetFS(Default, budget)
	budgeted, err := c.OpenFile(filepath.Join(dir, "budgeted"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer budgeted.Close()
	// with budget 1, a second file takes the slot before every op
	churn, err := c.OpenFile(filepath.Join(dir, "churn"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer churn.Close()
	for _, f := range []File{direct, budgeted} {
		if _, err := f.WriteAt(make([]byte, 1<<20), 0); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := op(direct, buf, i); err != nil {
			b.Fatal(err)
		}
	}
	directNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	start = time.Now()
	for i := 0; i < b.N; i++ {
		if budget == 1 {
			churn.Stat()
		}
		if err := op(budgeted, buf, i); err != nil {
			b.Fatal(err)
		}
	}
	budgetNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(directNs, "direct-ns/op")
	b.ReportMetric(budgetNs, "budget-ns/op")
	b.ReportMetric(budgetNs/directNs, "budget/direct")
}

func readOp(f File, buf []byte, i int) error {
	_, err := f.ReadAt(buf, int64(i%256)*int64(len(buf))%(1<<20-int64(len(buf))))
	return err
}

func writeOp(f File, buf []byte, i int) error {
	_, err := f.WriteAt(buf, int64(i%256)*int64(len(buf))%(1<<20-int64(len(buf))))
	return err
}

// BenchmarkBudgetReadAt: the hot path (file open) adds one mutex and an LRU
// move to a pread.
func BenchmarkBudgetReadAt(b *testing.B) { benchPair(b, 4096, 16, readOp) }

func BenchmarkBudgetWriteAt(b *testing.B) { benchPair(b, 4096, 16, writeOp) }

// BenchmarkBudgetReadAtEvicted: every read reopens (budget 1, another file
// used in between); budget-ns/op includes the other file's Stat and reopen.
func BenchmarkBudgetReadAtEvicted(b *testing.B) { benchPair(b, 4096, 1, readOp) }

// BenchmarkBudgetReadAt64: small reads, where the budget's fixed cost shows.
func BenchmarkBudgetReadAt64(b *testing.B) { benchPair(b, 64, 16, readOp) }
