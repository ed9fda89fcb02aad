package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/internal/testutil"
)

// compactedEnv is a mounted compacted topic t of keyed records (updates
// and tombstones of keys k0..k14) in many small segments, and the records
// it held before any cleaning.
type compactedEnv struct {
	*env
	before []jsonRec
}

// jsonRec is one line of log.jsonl.
type jsonRec struct {
	Offset int64
	Key    string
	Value  *string
}

func mountCompacted(t *testing.T) *compactedEnv {
	return mountCompactedAt(t, t.TempDir())
}

// compactedOpt is the mount of a compacted environment's data directory.
var compactedOpt = mountOpt{defaults: map[string]string{"cleanup.policy": "compact", "segment.bytes": "1500",
	"index.interval.bytes": "200", "segment.index.bytes": "4096", "file.delete.delay.ms": "0"}}

// mountCompactedAt is mountCompacted with the data directory data.
func mountCompactedAt(t *testing.T, data string) *compactedEnv {
	e := mountAt(t, data, compactedOpt)
	e.Sh("mkdir t")
	appendKeyed(e, 7, 60)
	c := &compactedEnv{env: e}
	j := c.openJSONL(1 << 16)
	j.lines(-1)
	j.f.Close() // so that the mount can be unmounted
	c.before = j.recs
	return c
}

// appendKeyed appends batches of 1-5 keyed records (updates and
// tombstones of keys k0..k14) to t/0, one write each.
func appendKeyed(e *env, seed int64, batches int) {
	rng := rand.New(rand.NewSource(seed))
	for b := 0; b < batches; b++ {
		var lines strings.Builder
		for i := 0; i < 1+rng.Intn(5); i++ {
			value := fmt.Sprintf("%q", fmt.Sprintf("v%d-%d", b, i))
			if rng.Intn(8) == 0 {
				value = "null"
			}
			fmt.Fprintf(&lines, "{\"key\":\"k%d\",\"value\":%s}\n", rng.Intn(15), value)
		}
		if err := testutil.AppendOnce(e.Path("t/0/log.jsonl"), lines.String()); err != nil {
			e.t.Fatal(err)
		}
	}
}

// clean runs one cleaning of t, which must remove records.
func (c *compactedEnv) clean() {
	sum, err := compact.NewCleaner(compact.Options{DedupeBufferSize: 1 << 16}).CleanAll(compact.Targets(c.st), true)
	if err != nil || sum.Cleaned != 1 || sum.RecordsRemoved == 0 {
		c.t.Fatalf("clean: %v %+v", err, sum)
	}
}

// jsonlReader reads log.jsonl line by line, keeping the records seen and
// the byte position after the last whole line.
type jsonlReader struct {
	t    testing.TB
	f    *os.File
	r    *bufio.Reader
	recs []jsonRec
	pos  int64
}

func (c *compactedEnv) openJSONL(bufSize int) *jsonlReader {
	f, err := os.Open(c.Path("t/0/log.jsonl"))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { f.Close() })
	return &jsonlReader{t: c.t, f: f, r: bufio.NewReaderSize(f, bufSize)}
}

// lines reads n lines (n < 0: to the end).
func (j *jsonlReader) lines(n int) {
	for i := 0; n < 0 || i < n; i++ {
		line, err := j.r.ReadString('\n')
		if err != nil {
			if n < 0 && line == "" {
				return
			}
			j.t.Fatalf("read after %d records: %v (%q)", len(j.recs), err, line)
		}
		var r jsonRec
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			j.t.Fatalf("line %q is not a whole record: %v", line, err)
		}
		j.recs = append(j.recs, r)
		j.pos += int64(len(line))
	}
}

// check asserts one stream in offset order ending at the last record.
func (j *jsonlReader) check(before []jsonRec) {
	for i := 1; i < len(j.recs); i++ {
		if j.recs[i].Offset <= j.recs[i-1].Offset {
			j.t.Fatalf("offset %d after %d: duplicate or out of order", j.recs[i].Offset, j.recs[i-1].Offset)
		}
	}
	if last := before[len(before)-1].Offset; j.recs[len(j.recs)-1].Offset != last {
		j.t.Fatalf("reader ended at offset %d, want %d", j.recs[len(j.recs)-1].Offset, last)
	}
}

// TestMountedReaderAcrossCompaction reads half of a compacted partition's
// log.jsonl, cleans the log and reads on from the same position (a record
// boundary): one stream in offset order, without error or duplicate.
// @key/K then gives every key's latest value (ENOENT for a tombstone).
func TestMountedReaderAcrossCompaction(t *testing.T) {
	c := mountCompacted(t)
	j := c.openJSONL(64)
	j.lines(len(c.before) / 2)
	c.clean()
	if _, err := j.f.Seek(j.pos, 0); err != nil {
		t.Fatal(err)
	}
	j.r.Reset(j.f)
	j.lines(-1)
	j.check(c.before)
	latest := map[string]jsonRec{}
	for _, r := range c.before {
		latest[r.Key] = r
	}
	for key, want := range latest {
		b, err := os.ReadFile(c.Path("t/0/@key/" + key))
		switch {
		case want.Value == nil && !os.IsNotExist(err):
			t.Errorf("@key/%s of a tombstoned key: %q, %v; want ENOENT", key, b, err)
		case want.Value != nil && (err != nil || strings.TrimSuffix(string(b), "\n") != *want.Value):
			t.Errorf("@key/%s = %q, %v; want %q", key, b, err, *want.Value)
		}
	}
}

// TestMountedReaderMidRecordAcrossCompaction is docs/spec.md §3's harder case: a
// reader whose file position is inside a record (here: 64-byte reads) when
// the segment is cleaned must continue with the next surviving record,
// never with the middle of another one.
func TestMountedReaderMidRecordAcrossCompaction(t *testing.T) {
	c := mountCompacted(t)
	j := c.openJSONL(64)
	j.lines(len(c.before) / 2) // the bufio buffer has read on into the next record
	c.clean()
	j.lines(-1)
	j.check(c.before)
}

// TestTailAcrossRetention: positions do not move when retention deletes
// old segments — a running `tail -f` prints no "file truncated" and no
// duplicate — and they are the same after a remount (sidecar).
func TestTailAcrossRetention(t *testing.T) {
	e := newEnv(t, mountOpt{})
	fillRetained(e)
	r, stderr, stopTail := startTail(t, e, "-n +1 -s 0.1 -f t/0/log")
	expect := func(from, to int) {
		t.Helper()
		for i := from; i <= to; i++ {
			line, err := readLineTimeout(r, 5*time.Second)
			if err != nil || line != fmt.Sprintf("%d\n", i) {
				t.Fatalf("tail: got %q (%v), want %d; stderr %s", line, err, i, stderr.String())
			}
		}
	}
	expect(1, 2000)
	size := e.Sh("stat -c %s t/0/log")
	last := e.Sh("tail -c 100 t/0/log")
	mid := e.Sh("dd if=t/0/log bs=1 skip=8000 count=30 status=none")
	if err := e.st.RunMaintenance(true, false); err != nil {
		t.Fatal(err)
	}
	start := e.Sh("grep log_start_offset t/0/stat")
	if start == "log_start_offset: 0\n" {
		t.Fatalf("retention removed nothing")
	}
	if got := e.Sh("stat -c %s t/0/log"); got != size {
		t.Fatalf("size %s after retention, was %s", got, size)
	}
	if got := e.Sh("tail -c 100 t/0/log"); got != last {
		t.Fatalf("tail -c after retention %q, was %q", got, last)
	}
	if err := e.AppendOnce("t/0/log", seqLines(2001, 2050)); err != nil {
		t.Fatal(err)
	}
	expect(2001, 2050)
	if s := stderr.String(); s != "" {
		t.Fatalf("tail complained: %s", s)
	}
	stopTail()
	size = e.Sh("stat -c %s t/0/log")
	e.Unmount()

	r2 := mountAt(t, e.data, mountOpt{})
	if got := r2.Sh("stat -c %s t/0/log"); got != size {
		t.Fatalf("size after remount %s, was %s", got, size)
	}
	if got := r2.Sh("dd if=t/0/log bs=1 skip=8000 count=30 status=none"); got != mid && !strings.HasPrefix(start, "log_start_offset: 1") {
		t.Logf("position 8000 was removed by retention (start %s)", start)
	}
	if got := r2.Sh("tail -c 100 t/0/log | tail -1"); got != "2050\n" {
		t.Fatalf("tail after remount %q", got)
	}
	if strings.Contains(r2.logs.String(), "recomputing positions") {
		t.Fatalf("clean remount recomputed positions:\n%s", r2.logs.String())
	}
}

// fillRetained makes topic t with 4 KiB segments and a retention of 16
// KiB, and appends lines 1 to 2000 to it in 100 writes of 20 lines.
func fillRetained(e *env) {
	e.t.Helper()
	e.Sh("mkdir t && printf 'segment.bytes=4096\\nretention.bytes=16384\\n' >> t/config")
	for i := 0; i < 100; i++ {
		if err := e.AppendOnce("t/0/log", seqLines(i*20+1, i*20+20)); err != nil {
			e.t.Fatal(err)
		}
	}
}

func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func readLineTimeout(r *bufio.Reader, d time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() { s, err := r.ReadString('\n'); ch <- res{s, err} }()
	select {
	case x := <-ch:
		return x.s, x.err
	case <-time.After(d):
		return "", io.ErrNoProgress
	}
}

// startTail runs tail with args in the mount; it returns tail's output,
// its stderr and a function that stops it (called at the test's end too).
func startTail(t *testing.T, e *env, args string) (*bufio.Reader, *testutil.SyncBuffer, func()) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "cd '"+e.Dir+"' && exec tail "+args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	return bufio.NewReader(out), stderr, stop
}
