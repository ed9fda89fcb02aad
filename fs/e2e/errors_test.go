package e2e

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

func openErr(path string, flag int) error {
	f, err := os.OpenFile(path, flag, 0o644)
	if err == nil {
		f.Close()
	}
	return err
}

// TestErrnoTable covers docs/spec.md §8's table (ENOSPC and EIO have their own
// tests) and malformed paths; each failure also leaves one log line.
func TestErrnoTable(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && seq 1 10 >> t/0/log")
	p := e.Path
	long := strings.Repeat("x", 250)
	cases := []struct {
		name string
		op   func() error
		want syscall.Errno
		logs string // a fragment the log line must hold ("" = no log expected)
	}{
		{"unknown topic", func() error { _, err := os.Stat(p("nosuch/0/log")); return err }, syscall.ENOENT, ""},
		{"unknown partition", func() error { _, err := os.Stat(p("t/7/log")); return err }, syscall.ENOENT, ""},
		{"offset above end", func() error { _, err := os.Stat(p("t/0/@offset/11")); return err }, syscall.ENOENT, "offset 11"},
		{"range end above end", func() error { _, err := os.Stat(p("t/0/@offset/2..11")); return err }, syscall.ENOENT, "offset 11"},
		{"offset -1", func() error { _, err := os.Stat(p("t/0/@offset/-1")); return err }, syscall.EINVAL, `offset \"-1\"`},
		{"offset 1e3", func() error { _, err := os.Stat(p("t/0/@offset/1e3")); return err }, syscall.EINVAL, `offset \"1e3\"`},
		{"offset junk", func() error { _, err := os.Stat(p("t/0/@offset/abc.jsonl")); return err }, syscall.EINVAL, `offset \"abc\"`},
		{"time yesterday", func() error { _, err := os.Stat(p("t/0/@time/yesterday")); return err }, syscall.EINVAL, `time \"yesterday\"`},
		{"topic a b", func() error { return os.Mkdir(p("a b"), 0o755) }, syscall.EINVAL, `topic name \"a b\"`},
		{"topic a b lookup", func() error { _, err := os.Stat(p("a b")); return err }, syscall.EINVAL, `topic name \"a b\"`},
		{"topic 250 chars", func() error { return os.Mkdir(p(long), 0o755) }, syscall.EINVAL, "topic name"},
		{"partition gap", func() error { return os.Mkdir(p("t/5"), 0o755) }, syscall.EINVAL, "partition"},
		{"config bad key", func() error { return testutil.AppendOnce(p("t/config"), "no.such=1\n") }, syscall.EINVAL, "no.such"},
		{"config bad value", func() error { return testutil.AppendOnce(p("t/config"), "retention.ms=abc\n") }, syscall.EINVAL, "retention.ms"},
		{"config bad line", func() error { return testutil.AppendOnce(p("t/config"), "just words\n") }, syscall.EINVAL, "key=value"},
		{"bad json line", func() error { return e.AppendOnce("t/0/log.jsonl", "{nope}\n") }, syscall.EINVAL, "line 1"},
		{"write read-only view", func() error { return openErr(p("t/0/@offset/0"), os.O_WRONLY|os.O_APPEND) }, syscall.EPERM, "open"},
		{"write stat", func() error { return openErr(p("t/0/stat"), os.O_WRONLY) }, syscall.EPERM, "open"},
		{"write segments file", func() error {
			return openErr(p("t/0/segments/00000000000000000000.log"), os.O_WRONLY|os.O_APPEND)
		}, syscall.EPERM, "open"},
		{"> log (O_TRUNC)", func() error { return openErr(p("t/0/log"), os.O_WRONLY|os.O_TRUNC) }, syscall.EPERM, "without O_APPEND"},
		{"truncate log", func() error { return os.Truncate(p("t/0/log"), 0) }, syscall.EPERM, "truncate"},
		{"unlink log", func() error { return os.Remove(p("t/0/log")) }, syscall.EPERM, "unlink"},
		{"rmdir topic", func() error { return os.Remove(p("t")) }, syscall.EPERM, "rmdir"},
		{"record too large", func() error { return e.AppendOnce("t/0/log", strings.Repeat("y", 1100000)+"\n") }, syscall.EFBIG, "too large"},
	}
	for _, c := range cases {
		before := len(e.logs.String())
		if got := testutil.Errno(c.op()); got != c.want {
			t.Errorf("%s: errno %v, want %v", c.name, got, c.want)
			continue
		}
		if c.logs != "" {
			lines := e.logs.String()[before:]
			if !strings.Contains(lines, c.logs) || strings.Count(lines, "request failed") != 1 {
				t.Errorf("%s: want one log line naming %q, got:\n%s", c.name, c.logs, lines)
			}
		}
	}
	if got := e.Sh("cat t/0/log | wc -l"); got != "10\n" {
		t.Errorf("failed operations changed the log: %s lines", got)
	}
	if ts, err := e.st.Topics(); err != nil || len(ts) != 1 || ts[0] != "t" {
		t.Errorf("topics %v %v", ts, err)
	}
}

// TestReadOnlyMountRefusesWrites: every write on a --read-only mount is EROFS.
func TestReadOnlyMountRefusesWrites(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && seq 1 3 >> t/0/log")
	e.Unmount()
	r := mountAt(t, e.data, mountOpt{readOnly: true})
	if got := r.Sh("cat t/0/log"); got != "1\n2\n3\n" {
		t.Fatalf("read-only log = %q", got)
	}
	p := r.Path
	ops := map[string]func() error{
		"append log":   func() error { return r.AppendOnce("t/0/log", "x\n") },
		"append jsonl": func() error { return r.AppendOnce("t/0/log.jsonl", `{"value":"x"}`+"\n") },
		"mkdir topic":  func() error { return os.Mkdir(p("u"), 0o755) },
		"mkdir part":   func() error { return os.Mkdir(p("t/1"), 0o755) },
		"config":       func() error { return testutil.AppendOnce(p("t/config"), "retention.ms=1\n") },
		"truncate":     func() error { return os.Truncate(p("t/0/log"), 0) },
		"key write":    func() error { return os.WriteFile(p("t/0/@key/k"), []byte("v"), 0o644) },
		"key rm":       func() error { return os.Remove(p("t/0/@key/k")) },
	}
	for name, op := range ops {
		if got := testutil.Errno(op()); got != syscall.EROFS {
			t.Errorf("%s: errno %v, want EROFS", name, got)
		}
	}
}
