package logstore

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// cutBytes is the Options.BatchBytes of the tests that cut appends.
const cutBytes = 64 << 10

// cutOptions are test options with appends cut at cutBytes.
func cutOptions(fs vfs.FS) Options {
	opt := testOptions(fs, newClock(), nil)
	opt.BatchBytes = cutBytes
	return opt
}

// With Options.BatchBytes, an uncompressed append of 1 MiB, by Append or
// AppendLines, is written as batches of at most that size, each as full as
// the next record allows, in one append: offsets and values read back in
// order, and a line larger than the cut (under max.message.bytes) gets a
// batch of its own.
func TestAppendCutsBatches(t *testing.T) {
	big := bytes.Repeat([]byte("b"), cutBytes+1000)
	var text []byte
	for i := 0; len(text) < 1<<20; i++ {
		text = fmt.Appendf(text, "%010d%s\n", i, bytes.Repeat([]byte("x"), 109))
	}
	text = append(append(text, big...), '\n')
	recs := record.AppendLineRecords(nil, text)
	for _, lines := range []bool{false, true} {
		fs := vfs.NewCrashFS()
		st, l := openAt(t, "/data", cutOptions(fs))
		var first int64
		var n int
		var err error
		if lines {
			first, n, err = l.AppendLines(text)
		} else {
			first, err = l.Append(recs)
			n = len(recs)
		}
		if err != nil || first != 0 || n != len(recs) {
			t.Fatalf("lines %v: append: first %d, %d records (want %d), %v", lines, first, n, len(recs), err)
		}
		got := readLog(t, l, 0)
		if len(got) != len(recs) {
			t.Fatalf("lines %v: read %d records, want %d", lines, len(got), len(recs))
		}
		for i, r := range got {
			if r.off != int64(i) || r.value != string(recs[i].Value) {
				t.Fatalf("lines %v: record %d: offset %d value %.20q", lines, i, r.off, r.value)
			}
		}
		st.Close()
		data := readFileBytes(t, fs, "/data/t-0/00000000000000000000.log")
		var sizes []int64
		var next int64
		for pos := int64(0); pos < int64(len(data)); {
			h, err := record.ParseHeader(data[pos:])
			if err != nil || h.BaseOffset != next {
				t.Fatalf("lines %v: batch at %d: base %d, want %d (%v)", lines, pos, h.BaseOffset, next, err)
			}
			sizes = append(sizes, h.Size())
			next = h.LastOffset() + 1
			pos += h.Size()
		}
		last := len(sizes) - 1
		if len(sizes) < 17 || sizes[last] <= cutBytes || sizes[last] > int64(len(big))+100 {
			t.Fatalf("lines %v: %d batches, the last (the large line alone) %d bytes", lines, len(sizes), sizes[last])
		}
		for i, s := range sizes[:last-1] {
			if s > cutBytes || s < cutBytes-200 {
				t.Fatalf("lines %v: batch %d is %d bytes, want at most %d and within a record of it", lines, i, s, cutBytes)
			}
		}
	}
}

// A daemon killed inside an append of several batches leaves none of them:
// the segment as it is before each write of that append (what a kill then
// leaves, page cache included) recovers to the records before the append.
func TestKilledMultiBatchAppendLeavesNone(t *testing.T) {
	mem := vfs.NewCrashFS()
	const seg = "/data/t-0/00000000000000000000.log"
	var snaps [][]byte
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, name string) (bool, error) {
		if op == vfs.OpWrite && strings.HasSuffix(name, seg) {
			snaps = append(snaps, readFileBytes(t, mem, seg))
		}
		return false, nil
	}))
	st, l := openAt(t, "/data", cutOptions(fs))
	if _, _, err := l.AppendLines([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	n := len(snaps)
	text := bytes.Repeat([]byte(strings.Repeat("y", 99)+"\n"), 2000) // under pipeMinBytes
	if first, k, err := l.AppendLines(text); err != nil || first != 1 || k != 2000 {
		t.Fatalf("append: %d %d %v", first, k, err)
	}
	st.Close()
	during := snaps[n:]
	if len(during) < 2 {
		t.Fatalf("the append of %d batches made %d writes", len(text)/cutBytes+1, len(during))
	}
	recoversBefore(t, "", during)
}

// recoversBefore checks that each of the segments during (as an append
// left it before each of its writes) recovers to the one record "before".
func recoversBefore(t *testing.T, name string, during [][]byte) {
	t.Helper()
	for i, data := range during {
		crashed, c := writePartition("t-0", map[string][]byte{"00000000000000000000.log": data})
		st, l := openTest(t, crashed, c, nil)
		got := readLog(t, l, 0)
		st.Close()
		if len(got) != 1 || got[0].value != "before" {
			t.Fatalf("%s: killed before write %d of the append: %d records recovered, want only the one before it", name, i+1, len(got))
		}
	}
}

// Without Options.BatchBytes, the records of one append are one batch
// (docs/spec.md §4: the complete lines of one write()): 900 KiB of lines, under
// max.message.bytes, are one batch.
func TestOneBatchPerAppend(t *testing.T) {
	fs := vfs.NewCrashFS()
	st, l := openAt(t, "/data", testOptions(fs, newClock(), nil))
	text := bytes.Repeat([]byte(strings.Repeat("z", 99)+"\n"), 9216)
	if _, n, err := l.AppendLines(text); err != nil || n != 9216 {
		t.Fatalf("append: %d records, %v", n, err)
	}
	st.Close()
	data := readFileBytes(t, fs, "/data/t-0/00000000000000000000.log")
	h, err := record.ParseHeader(data)
	if err != nil || h.NumRecords != 9216 || h.Size() != int64(len(data)) {
		t.Fatalf("first batch: %d records, %d of %d bytes (%v)", h.NumRecords, h.Size(), len(data), err)
	}
}

// An append of several batches whose second write (the first batch's
// right CRC) fails is reported failed and leaves nothing: the segment is
// cut back to its size before it, the log reads the records before it,
// and the next append succeeds at the offset the failed one would have had.
func TestFailedCRCWriteUndoesAppend(t *testing.T) {
	mem := vfs.NewCrashFS()
	const seg = "/data/t-0/00000000000000000000.log"
	writes, failAt := 0, -1
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, name string) (bool, error) {
		if op != vfs.OpWrite || !strings.HasSuffix(name, seg) {
			return false, nil
		}
		writes++
		if writes == failAt {
			return false, syscall.EIO
		}
		return false, nil
	}))
	st, l := openAt(t, "/data", cutOptions(fs))
	defer st.Close()
	if _, _, err := l.AppendLines([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	size := len(readFileBytes(t, mem, seg))
	failAt = writes + 2
	text := bytes.Repeat([]byte(strings.Repeat("y", 99)+"\n"), 2000) // under pipeMinBytes
	if _, _, err := l.AppendLines(text); err == nil {
		t.Fatal("append whose CRC write failed succeeded")
	}
	if writes != failAt {
		t.Fatalf("the failed append made %d writes, want 2", writes-failAt+2)
	}
	if got := len(readFileBytes(t, mem, seg)); got != size {
		t.Fatalf("segment is %d bytes after the failed append, want %d", got, size)
	}
	if first, _, err := l.AppendLines([]byte("after\n")); err != nil || first != 1 {
		t.Fatalf("append after the failed one: offset %d, %v", first, err)
	}
	got := readLog(t, l, 0)
	if len(got) != 2 || got[0].value != "before" || got[1].value != "after" {
		t.Fatalf("records after the failed append: %v", got)
	}
}
