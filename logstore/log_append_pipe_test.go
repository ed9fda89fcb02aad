package logstore

import (
	"bytes"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

const pipeSeg = "/data/t-0/00000000000000000000.log"

// pipeText is an append of 600 KB of lines, written through the pipe.
var pipeText = bytes.Repeat([]byte(strings.Repeat("p", 99)+"\n"), 6000)

// segmentWrites opens a store on a crash filesystem that calls each with
// the segment's bytes before every write to it.
func segmentWrites(t *testing.T, opt func(vfs.FS) Options, each func(data []byte) error) (*vfs.CrashFS, *Store, *Log) {
	mem := vfs.NewCrashFS()
	var mu sync.Mutex // the pipe writes from a goroutine of its own
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, name string) (bool, error) {
		if op != vfs.OpWrite || !strings.HasSuffix(name, pipeSeg) {
			return false, nil
		}
		mu.Lock()
		defer mu.Unlock()
		f, err := mem.Open(pipeSeg)
		if err != nil {
			return false, err
		}
		defer f.Close()
		b, err := vfs.ReadAll(f)
		if err != nil {
			return false, err
		}
		return false, each(b)
	}))
	st, l := openAt(t, "/data", opt(fs))
	return mem, st, l
}

// defaultOptions are test options with one batch per append.
func defaultOptions(fs vfs.FS) Options { return testOptions(fs, newClock(), nil) }

// A daemon killed inside an append written through the pipe, one batch or
// cut into several, leaves none of it: the segment as it is before each
// write of the append recovers to the record before it. The append made
// more writes than its batches (its records went in parts), and once done
// the segment is its batches exactly, all of them read back.
func TestKilledPipedAppendLeavesNone(t *testing.T) {
	for name, opt := range map[string]func(vfs.FS) Options{"one batch": defaultOptions, "cut": cutOptions} {
		var snaps [][]byte
		mem, st, l := segmentWrites(t, opt, func(b []byte) error { snaps = append(snaps, b); return nil })
		if _, _, err := l.AppendLines([]byte("before\n")); err != nil {
			t.Fatal(err)
		}
		n := len(snaps)
		if first, k, err := l.AppendLines(pipeText); err != nil || first != 1 || k != 6000 {
			t.Fatalf("%s: append: %d %d %v", name, first, k, err)
		}
		if got := readLog(t, l, 0); len(got) != 6001 || got[6000].value != strings.Repeat("p", 99) {
			t.Fatalf("%s: %d records read back", name, len(got))
		}
		st.Close()
		data := readFileBytes(t, mem, pipeSeg)
		batches, end := 0, int64(0)
		for end < int64(len(data)) {
			h, err := record.ParseHeader(data[end:])
			if err != nil {
				t.Fatalf("%s: batch at %d: %v", name, end, err)
			}
			end += h.Size()
			batches++
		}
		during := snaps[n:]
		if batches--; end != int64(len(data)) || len(during) <= batches { // the append's batches
			t.Fatalf("%s: segment of %d bytes holds batches to %d; %d writes for the append's %d batches", name, len(data), end, len(during), batches)
		}
		recoversBefore(t, name, during)
	}
}

// A piped append any of whose writes fails is reported failed and leaves
// nothing: the segment is cut back to its size before it, and the next
// append gets the offset the failed one would have had.
func TestFailedPipedWriteUndoesAppend(t *testing.T) {
	for fail := 1; ; fail++ {
		writes, armed := 0, false
		mem, st, l := segmentWrites(t, defaultOptions, func([]byte) error {
			if armed {
				if writes++; writes == fail {
					return syscall.EIO
				}
			}
			return nil
		})
		if _, _, err := l.AppendLines([]byte("before\n")); err != nil {
			t.Fatal(err)
		}
		size := len(readFileBytes(t, mem, pipeSeg))
		armed = true
		_, _, err := l.AppendLines(pipeText)
		armed = false
		if writes < fail { // every write of the append done
			st.Close()
			if err != nil || fail < 3 { // the records, then the header
				t.Fatalf("append of %d writes: %v", writes, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("append whose write %d failed succeeded", fail)
		}
		if got := len(readFileBytes(t, mem, pipeSeg)); got != size {
			t.Fatalf("write %d failed: segment is %d bytes after, want %d", fail, got, size)
		}
		if first, _, err := l.AppendLines([]byte("after\n")); err != nil || first != 1 {
			t.Fatalf("write %d failed: the next append: offset %d, %v", fail, first, err)
		}
		if got := readLog(t, l, 0); len(got) != 2 || got[1].value != "after" {
			t.Fatalf("write %d failed: %d records after", fail, len(got))
		}
		st.Close()
	}
}

// A piped append that rolls the segment (segment.ms passed) leaves the
// old segment as it was, with nothing of what the pipe wrote there, and
// is written whole to the new one; reopened, the log holds every record.
func TestPipedAppendRolls(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	cfg := map[string]string{"segment.ms": "60000"}
	st, l := openTest(t, fs, c, cfg)
	if _, _, err := l.AppendLines([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	size := len(readFileBytes(t, fs, pipeSeg))
	c.Add(2 * time.Minute)
	if first, k, err := l.AppendLines(pipeText); err != nil || first != 1 || k != 6000 {
		t.Fatalf("append: %d %d %v", first, k, err)
	}
	st.Close()
	if got := len(readFileBytes(t, fs, pipeSeg)); got != size {
		t.Fatalf("old segment is %d bytes after the roll, want %d", got, size)
	}
	st, l = openTest(t, fs, c, cfg)
	defer st.Close()
	segs, release := l.Segments()
	release()
	got := readLog(t, l, 0)
	if len(segs) != 2 || segs[1].Base != 1 || len(got) != 6001 || got[6000].off != 6000 {
		t.Fatalf("%d segments, %d records after reopening", len(segs), len(got))
	}
}
