package logstore

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// armedInjector fails the nth operation of kind op after it is armed.
type armedInjector struct {
	armed atomic.Bool
	inner *vfs.NthInjector
}

func (a *armedInjector) MaybeFail(op vfs.Op, name string) (bool, error) {
	if !a.armed.Load() {
		return false, nil
	}
	return a.inner.MaybeFail(op, name)
}

func valueRecs(from int64, n int) []record.Record {
	rs := make([]record.Record, n)
	for i := range rs {
		rs[i].Value = []byte(fmt.Sprintf("o-%d-%s", from+int64(i), make([]byte, 40)))
	}
	return rs
}

func TestInjectedFailures(t *testing.T) {
	cases := []struct {
		op    vfs.Op
		err   error
		short bool
	}{
		{vfs.OpWrite, syscall.ENOSPC, true},
		{vfs.OpWrite, syscall.EIO, false},
		{vfs.OpSync, syscall.EIO, false},
		{vfs.OpCreate, syscall.ENOSPC, false},
		{vfs.OpTruncate, syscall.EIO, false},
		{vfs.OpRename, syscall.EIO, false},
	}
	for _, tc := range cases {
		for n := 1; n <= 12; n++ {
			name := fmt.Sprintf("%v-%v-%d", tc.op, tc.err, n)
			t.Run(name, func(t *testing.T) { testInjected(t, tc.op, tc.err, tc.short, n) })
		}
	}
}

func testInjected(t *testing.T, op vfs.Op, injErr error, short bool, n int) {
	mem, c := vfs.NewCrashFS(), newClock()
	inj := &armedInjector{inner: &vfs.NthInjector{Op: op, N: n, Err: injErr, Short: short}}
	fs := vfs.NewErrorFS(mem, inj)
	cfg := map[string]string{"segment.bytes": "1500", "index.interval.bytes": "100", "retention.bytes": "3000"}
	st, l := openTest(t, fs, c, cfg)
	inj.armed.Store(true)
	var sticky error
	acked := int64(0)
	for i := 0; i < 40; i++ {
		end := l.EndOffset()
		first, err := l.Append(valueRecs(end, 1+i%4))
		if err == nil {
			if sticky != nil && op == vfs.OpSync {
				t.Fatalf("append succeeded after a failed fsync (%v)", sticky)
			}
			if first != end {
				t.Fatalf("first offset %d, end was %d", first, end)
			}
			acked = l.EndOffset()
		}
		if err == nil && i%5 == 4 {
			err = l.Sync()
		}
		if err == nil && i%7 == 6 {
			_, err = l.ApplyRetention()
			if err != nil { // retention failures are reported, not sticky
				t.Logf("retention: %v", err)
				err = nil
			}
		}
		if err != nil {
			if sticky == nil {
				sticky = err
				if injErr == syscall.ENOSPC && !errors.Is(err, partlog.ErrNoSpace) && op == vfs.OpWrite {
					t.Fatalf("ENOSPC not mapped: %v", err)
				}
			}
		}
	}
	if inj.inner.Fired() > 0 && (op == vfs.OpWrite || op == vfs.OpSync) && sticky == nil {
		t.Fatalf("injected %v failure left no error", op)
	}
	if op == vfs.OpWrite && inj.inner.Fired() > 0 {
		// the failed append was rolled back: the log takes appends again
		end := l.EndOffset()
		if _, err := l.Append(valueRecs(end, 2)); err != nil {
			t.Fatalf("append after a rolled-back write failure: %v", err)
		}
		acked = end + 2
	}
	checkConsistent(t, l, acked)
	st.Close()
	// reopen on the healthy filesystem: the same records, no hole
	st2, l2 := openTest(t, mem, c, cfg)
	defer st2.Close()
	checkConsistent(t, l2, acked)
}

// checkConsistent reads the whole log: offsets contiguous from the start
// offset to acked, each value naming its offset.
func checkConsistent(t *testing.T, l *Log, acked int64) {
	t.Helper()
	if end := l.EndOffset(); end != acked {
		t.Fatalf("end offset %d, acknowledged %d", end, acked)
	}
	start := l.StartOffset()
	all := readLog(t, l, start)
	if int64(len(all)) != acked-start {
		t.Fatalf("%d records from %d, want %d", len(all), start, acked-start)
	}
	for i, r := range all {
		off := start + int64(i)
		if r.off != off || r.value[:len(fmt.Sprintf("o-%d-", off))] != fmt.Sprintf("o-%d-", off) {
			t.Fatalf("record at %d is %+v", off, r)
		}
	}
}

// TestFailedRollbackIsSticky: a write fails and so does the truncate that
// would roll it back; the log refuses appends and stays consistent.
func TestFailedRollbackIsSticky(t *testing.T) {
	mem, c := vfs.NewCrashFS(), newClock()
	var armed atomic.Bool
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, name string) (bool, error) {
		if armed.Load() && (op == vfs.OpWrite || op == vfs.OpTruncate) && strings.HasSuffix(name, ".log") {
			return true, syscall.EIO
		}
		return false, nil
	}))
	st, l := openTest(t, fs, c, nil)
	defer st.Close()
	if _, err := l.Append(valueRecs(0, 5)); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if _, err := l.Append(valueRecs(5, 5)); err == nil {
		t.Fatal("append succeeded")
	}
	armed.Store(false)
	if _, err := l.Append(valueRecs(5, 5)); err == nil {
		t.Fatal("append after a failed rollback succeeded")
	}
	if err := st.Close(); err == nil {
		t.Fatal("close hides the sticky error")
	}
	st2, l2 := openTest(t, mem, c, nil)
	defer st2.Close()
	checkConsistent(t, l2, 5) // the half-written batch is cut by recovery
}
