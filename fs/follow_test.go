package fs

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog/memlog"
)

// follower runs `tail` with args in the mount and delivers its lines.
type follower struct {
	cmd   *exec.Cmd
	lines chan string
	errs  *testutil.SyncBuffer
}

func (m *mounted) follow(args string) *follower {
	m.t.Helper()
	cmd := exec.Command("bash", "-c", "cd '"+m.Dir+"' && exec tail "+args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	f := &follower{cmd: cmd, lines: make(chan string, 1<<16), errs: &testutil.SyncBuffer{}}
	cmd.Stderr = f.errs
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(out)
		for {
			s, err := r.ReadString('\n')
			if s != "" {
				f.lines <- s
			}
			if err == io.EOF || err != nil {
				close(f.lines)
				return
			}
		}
	}()
	m.t.Cleanup(f.stop)
	return f
}

func (f *follower) stop() {
	if f.cmd.ProcessState == nil {
		_ = f.cmd.Process.Kill()
		_ = f.cmd.Wait()
	}
}

// expect waits up to d for the next line and checks it.
func (f *follower) expect(t *testing.T, want string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case got, ok := <-f.lines:
		if !ok {
			t.Fatalf("tail ended; stderr: %s", f.errs.String())
		}
		if got != want {
			t.Fatalf("tail line %q, want %q", got, want)
		}
	case <-time.After(d):
		t.Fatalf("no line %q within %v; stderr: %s", want, d, f.errs.String())
	}
	return time.Since(start)
}

func TestTailFollowsLogAndWindows(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t && seq 1 5 >> t/0/log")
	l, _ := st.Log("t", 0)
	_ = l
	fLog := m.follow("-n 1 -f t/0/log")
	fOff := m.follow("-n +1 -f t/0/@offset/3")
	fTime := m.follow("-n +1 -f t/0/@time/latest")
	fJSON := m.follow("-n 0 -s 0.1 -f t/0/log.jsonl")
	fLog.expect(t, "5\n", 2*time.Second)
	fOff.expect(t, "4\n", 2*time.Second)
	fOff.expect(t, "5\n", 2*time.Second)
	var worst time.Duration
	for i := 6; i <= 8; i++ {
		time.Sleep(300 * time.Millisecond)
		if err := m.AppendOnce("t/0/log", fmt.Sprintf("%d\n", i)); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d\n", i)
		worst = max(worst, fLog.expect(t, want, 2*time.Second))
		fOff.expect(t, want, 2*time.Second)
		fTime.expect(t, want, 2*time.Second)
		got := <-fJSON.lines
		if !strings.Contains(got, fmt.Sprintf(`"offset":%d,`, i-1)) {
			t.Fatalf("jsonl tail line %q", got)
		}
	}
	t.Logf("worst tail -f latency %v", worst)
	for _, f := range []*follower{fLog, fOff, fTime} {
		if s := f.errs.String(); s != "" {
			t.Errorf("tail stderr: %s", s)
		}
	}
}
