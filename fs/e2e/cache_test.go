package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/record"
)

// apiRendering is log and log.jsonl of t/0 as the log API gives its
// records now.
func apiRendering(t *testing.T, e *env) (plain, rendered string) {
	t.Helper()
	l, err := e.st.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	segs, release := l.Segments()
	defer release()
	var p, j []byte
	next := l.StartOffset()
	for _, s := range segs {
		err := l.Read(s, max(s.Base, next), func(r *record.Record) bool {
			if r.Value != nil {
				p = append(append(p, r.Value...), '\n')
			}
			j = append(jsonl.Append(j, r), '\n')
			next = r.Offset + 1
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return string(p), string(j)
}

// readsOf returns the FUSE read requests the daemon answered during fn,
// net of those .metrics costs to read.
func readsOf(t *testing.T, e *env, fn func()) int {
	t.Helper()
	a := fuseReads(t, e)
	b := fuseReads(t, e)
	fn()
	c := fuseReads(t, e)
	return c - b - (b - a)
}

// cachedReread cats name into got until no read of it reaches the daemon,
// at most 20 times, and returns the reads of the last cat. The kernel
// sends the release of an earlier open after its close returns, and an
// open made before that arrives reads with direct I/O (viewCache: one
// cached open at a time), as may its readahead still running.
func cachedReread(t *testing.T, e *env, name string, got *string) (n int) {
	t.Helper()
	for range 20 {
		if n = readsOf(t, e, func() { *got = e.Sh("cat " + name) }); n == 0 {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// readOnlyEnv writes script's data on a writable mount, then mounts the
// data directory read-only with o (readOnly set).
func readOnlyEnv(t *testing.T, script string, o mountOpt) *env {
	t.Helper()
	w := newEnv(t, mountOpt{defaults: o.defaults})
	w.Sh(script)
	w.Unmount()
	o.readOnly = true
	return mountAt(t, w.data, o)
}

// TestRereadServedFromCache: on a read-only mount a second cat of log
// (and log.jsonl) gives the same bytes, the log API's, without a read
// reaching the daemon; on a writable mount every cat reads with direct
// I/O (viewCache: a write through the kernel moves its size past what the
// file holds).
func TestRereadServedFromCache(t *testing.T) {
	e := readOnlyEnv(t, "mkdir t && seq 1 200000 >> t/0/log", mountOpt{})
	plain, rendered := apiRendering(t, e)
	for name, want := range map[string]string{"log": plain, "log.jsonl": rendered} {
		if got := e.Sh("cat t/0/" + name); got != want {
			t.Fatalf("first cat %s: %d bytes, the log API renders %d", name, len(got), len(want))
		}
		var got string
		if n := cachedReread(t, e, "t/0/"+name, &got); n != 0 {
			t.Errorf("second cat %s: %d reads reached the daemon", name, n)
		}
		if got != want {
			t.Errorf("second cat %s: %d bytes, the log API renders %d", name, len(got), len(want))
		}
	}
	w := newEnv(t, mountOpt{})
	w.Sh("mkdir t && seq 1 200000 >> t/0/log && cat t/0/log > /dev/null")
	var got string
	if n := readsOf(t, w, func() { got = w.Sh("cat t/0/log") }); n == 0 || got != plain {
		t.Errorf("second cat on a writable mount: %d reads reached the daemon (want direct I/O), %d bytes of %d", n, len(got), len(plain))
	}
}

// TestNoPageCache: with MountOptions.NoPageCache every read of a second
// cat on a read-only mount reaches the daemon, and the bytes are the log
// API's.
func TestNoPageCache(t *testing.T) {
	e := readOnlyEnv(t, "mkdir t && seq 1 200000 >> t/0/log", mountOpt{noPageCache: true})
	plain, _ := apiRendering(t, e)
	e.Sh("cat t/0/log > /dev/null")
	var got string
	if n := readsOf(t, e, func() { got = e.Sh("cat t/0/log") }); n == 0 {
		t.Error("second cat: no read reached the daemon; want direct I/O")
	}
	if got != plain {
		t.Errorf("second cat: %d bytes, the log API renders %d", len(got), len(plain))
	}
}

// TestReaderSeesAppends: a reader of log that has read to the end sees
// records appended through the mount and by another writer exactly —
// never zeros after the old end — and tail -f follows them.
func TestReaderSeesAppends(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && seq 1 1000 >> t/0/log")
	tail, stderr, _ := startTail(t, e, "-n +1001 -s 0.1 -f t/0/log")
	f, err := os.Open(e.Path("t/0/log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil || string(got) != seqLines(1, 1000) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	l, err := e.st.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1001; i <= 1040; i++ {
		line := fmt.Sprintf("%d\n", i)
		if i%2 == 0 {
			e.Sh("printf '" + line + "' >> t/0/log")
		} else if _, err := l.Append([]record.Record{{Value: []byte(fmt.Sprint(i))}}); err != nil {
			t.Fatal(err)
		}
		// Without a stat the reader may see the end it knew; with
		// one, the new line. Never anything else.
		more, err := io.ReadAll(f)
		if err != nil || !strings.HasPrefix(line, string(more)) {
			t.Fatalf("after appending %q the reader got %q, %v", line, more, err)
		}
		if _, err := f.Stat(); err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(f)
		if err != nil || string(more)+string(rest) != line {
			t.Fatalf("after appending %q and a stat the reader got %q then %q, %v", line, more, rest, err)
		}
		if s, err := readLineTimeout(tail, 5*time.Second); err != nil || s != line {
			t.Fatalf("tail -f: %q, %v, want %q; stderr %s", s, err, line, stderr.String())
		}
	}
	if all := e.Sh("cat t/0/log"); all != seqLines(1, 1040) {
		t.Fatalf("cat: %d bytes, want %d", len(all), len(seqLines(1, 1040)))
	}
}

// sameAsAPI: cat of log and log.jsonl give what the log API renders.
func sameAsAPI(t *testing.T, e *env, when string) {
	t.Helper()
	plain, rendered := apiRendering(t, e)
	if got := e.Sh("cat t/0/log"); got != plain {
		t.Errorf("%s: cat log differs from the log API's records (%d bytes, want %d)", when, len(got), len(plain))
	}
	if got := e.Sh("cat t/0/log.jsonl"); got != rendered {
		t.Errorf("%s: cat log.jsonl differs from the log API's records (%d bytes, want %d)", when, len(got), len(rendered))
	}
}

// TestNoReplacedBytesAfterCompaction: once a compaction swap replaced
// bytes of log and log.jsonl that the kernel had cached, a reader opening
// afterwards gets the cleaned log, while one open across the swap ends its
// stream without a duplicate.
func TestNoReplacedBytesAfterCompaction(t *testing.T) {
	c := mountCompacted(t)
	sameAsAPI(t, c.env, "before cleaning")
	sameAsAPI(t, c.env, "before cleaning, again")
	j := c.openJSONL(64)
	j.lines(len(c.before) / 2)
	c.clean()
	sameAsAPI(t, c.env, "after cleaning")
	j.lines(-1)
	j.check(c.before)
	sameAsAPI(t, c.env, "after cleaning, again")
}

// TestNoReplacedBytesAfterRetention: the same across a retention deletion.
func TestNoReplacedBytesAfterRetention(t *testing.T) {
	e := newEnv(t, mountOpt{})
	fillRetained(e)
	sameAsAPI(t, e, "before retention")
	sameAsAPI(t, e, "before retention, again")
	f, err := os.Open(e.Path("t/0/log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 1000)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	if err := e.st.RunMaintenance(true, false); err != nil {
		t.Fatal(err)
	}
	if e.Sh("grep log_start_offset t/0/stat") == "log_start_offset: 0\n" {
		t.Fatal("retention removed nothing")
	}
	sameAsAPI(t, e, "after retention")
	rest, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	// The open across the deletion reads on in one stream: lines in order,
	// none twice, none cut, up to the last one.
	lines := strings.Split(strings.TrimSuffix(string(head)+string(rest), "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		var a, b int
		if _, err := fmt.Sscan(lines[i-1], &a); err != nil {
			t.Fatalf("line %q", lines[i-1])
		}
		if _, err := fmt.Sscan(lines[i], &b); err != nil || b <= a {
			t.Fatalf("line %q after %q", lines[i], lines[i-1])
		}
	}
	if last := lines[len(lines)-1]; last != "2000" || bytes.Contains(rest, []byte{0}) {
		t.Fatalf("the open across the deletion ended at %q", last)
	}
}

// TestOneCachedOpenAtATime: on a read-only mount, while one open reads log through the page
// cache, a second open reads with direct I/O (its reads reach the
// daemon); once both are closed, an open reads through the cache again.
func TestOneCachedOpenAtATime(t *testing.T) {
	e := readOnlyEnv(t, "mkdir t && seq 1 100000 >> t/0/log", mountOpt{})
	plain, _ := apiRendering(t, e)
	first, err := os.Open(e.Path("t/0/log"))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if got, err := io.ReadAll(first); err != nil || string(got) != plain {
		t.Fatalf("first open: %d bytes, %v", len(got), err)
	}
	var got string
	if n := readsOf(t, e, func() { got = e.Sh("cat t/0/log") }); n == 0 || got != plain {
		t.Errorf("cat beside a cached open: %d reads reached the daemon (want direct I/O), %d bytes of %d", n, len(got), len(plain))
	}
	first.Close()
	e.Sh("cat t/0/log > /dev/null")
	if n := cachedReread(t, e, "t/0/log", &got); n != 0 || got != plain {
		t.Errorf("cat after the others closed: %d reads reached the daemon, %d bytes of %d", n, len(got), len(plain))
	}
}

// TestReadInRemovedRecords: an open of log (direct I/O on a writable
// mount) reading at a position whose records retention removed gets the
// next surviving records there (docs/spec.md §3), and a new open reads the
// surviving records.
func TestReadInRemovedRecords(t *testing.T) {
	e := newEnv(t, mountOpt{defaults: map[string]string{"file.delete.delay.ms": "0"}})
	e.Sh("mkdir t && printf 'segment.bytes=65536\\nretention.bytes=1048576\\n' >> t/config")
	e.Sh("seq 1 1000000 >> t/0/log")
	old := seqLines(1, 1000000)
	f, err := os.Open(e.Path("t/0/log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 4096)
	if _, err := io.ReadFull(f, head); err != nil || string(head) != old[:4096] {
		t.Fatalf("first read: %v", err)
	}
	if err := e.st.RunMaintenance(true, false); err != nil {
		t.Fatal(err)
	}
	const at = 3 << 20
	plain, _ := apiRendering(t, e)
	got := make([]byte, 4096)
	n, err := f.ReadAt(got, at)
	if err != nil || !strings.HasPrefix(plain, string(got[:n])) {
		t.Fatalf("read at %d after retention removed it: %.40q, %v; want the surviving records from %.40q", at, got[:n], err, plain)
	}
	b, err := os.ReadFile(e.Path("t/0/log"))
	if err != nil || !strings.HasSuffix(old, string(b)) || !strings.HasSuffix(string(b), plain) {
		t.Fatalf("a new open: %d bytes, %v; want the surviving %d bytes", len(b), err, len(plain))
	}
}
