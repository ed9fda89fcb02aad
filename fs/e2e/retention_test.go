package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

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
