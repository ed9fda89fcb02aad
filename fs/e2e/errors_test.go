package e2e

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/record"
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

// TestCorruptBatchReadsEIO: a flipped byte inside a batch fails the read
// with EIO and one log line naming the file and position; no corrupt
// record is returned.
func TestCorruptBatchReadsEIO(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t")
	for i := 0; i < 10; i++ {
		if err := e.AppendOnce("t/0/log", fmt.Sprintf("batch%d-a\nbatch%d-b\n", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	var good string // the records before the corrupt batch
	for i := 0; i < 6; i++ {
		good += fmt.Sprintf("batch%d-a\nbatch%d-b\n", i, i)
	}
	r, _ := damageSegment(e, func(b []byte) {
		at := strings.Index(string(b), "batch6-a")
		b[at] ^= 0x20 // 'b' -> 'B': a CRC mismatch in the 7th batch
	})
	// The first open reads through the kernel's page cache, where a short
	// read is the end of the file: the request fails whole. From then on
	// opens read with direct I/O: the records before the corrupt batch,
	// then EIO.
	for i := 0; i < 2; i++ {
		out, err := r.Try("cat t/0/log")
		if !isEIO(err) {
			t.Fatalf("cat %d of a corrupt log: %v", i, err)
		}
		if !strings.HasPrefix(good, out) || (i == 1 && out == "") {
			t.Fatalf("cat %d: output %q", i, out)
		}
	}
	logs := r.logs.String()
	if !strings.Contains(logs, "00000000000000000000.log") || !strings.Contains(logs, "errno=\"input/output error\"") {
		t.Fatalf("no log line naming the segment:\n%s", logs)
	}
	if _, err := r.Try("tail -1 t/0/log"); err == nil {
		t.Fatalf("tail of the corrupt batch succeeded")
	}
}

// TestCatOfDamagedBaseOffset raises the base offset of one batch (which no
// CRC covers) by one in a cleanly closed data directory: cat of log,
// log.jsonl, @offset and @time fails with EIO and a log line naming the
// segment file and the batch's position, instead of serving the record
// under the next offset and dropping that one.
func TestCatOfDamagedBaseOffset(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && for i in $(seq 0 9); do echo v$i >> t/0/log; done")
	l := e.log("t", 0)
	_, pos, err := l.Locate(5)
	if err != nil {
		t.Fatal(err)
	}
	e, seg := damageSegment(e, func(b []byte) { binary.BigEndian.PutUint64(b[pos:], 6) })
	for _, f := range []string{"log", "log.jsonl", "@offset/3", "@offset/6.jsonl", "@time/0"} {
		out, err := e.Try("cat t/0/" + f)
		if !isEIO(err) {
			t.Errorf("cat %s: %q, %v; want EIO", f, out, err)
		}
		if strings.Contains(out, "v5") {
			t.Errorf("cat %s served the damaged batch's record: %q", f, out)
		}
	}
	if logs := e.logs.String(); !strings.Contains(logs, seg) || !strings.Contains(logs, "at position "+strconv.FormatInt(pos, 10)) {
		t.Errorf("no log line naming %s at position %d:\n%s", seg, pos, logs)
	}
}

// TestGroupsWithMissingOffsetsPartition removes partition 0 of
// __consumer_offsets: the group stored in partition 1 is still listed and
// read, the partition left out is logged.
func TestGroupsWithMissingOffsetsPartition(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir __consumer_offsets __consumer_offsets/1 orders && seq 1 10 >> orders/0/log")
	l := e.log("__consumer_offsets", 1)
	k := kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "orders", Partition: 0}
	v := kmsg.OffsetCommitValue{Version: 3, Offset: 4, LeaderEpoch: -1, CommitTimestamp: 1700000000000}
	if _, err := l.Append([]record.Record{{Key: k.AppendTo(nil), Value: v.AppendTo(nil)}}); err != nil {
		t.Fatal(err)
	}
	e.Unmount()
	if err := os.RemoveAll(filepath.Join(e.data, "__consumer_offsets-0")); err != nil {
		t.Fatal(err)
	}
	e = mountAt(t, e.data, mountOpt{})
	if got := e.Sh("ls .groups"); got != "g\ng.jsonl\n" {
		t.Fatalf("ls .groups: %q", got)
	}
	if got := e.Sh("awk 'NR==2 {print $1, $2, $4, $5}' .groups/g"); got != "g orders 4 10\n" {
		t.Fatalf("cat .groups/g: %q", got)
	}
	if got := e.Sh("jq -r .current_offset .groups/g.jsonl"); got != "4\n" {
		t.Fatalf("cat .groups/g.jsonl: %q", got)
	}
	if !strings.Contains(e.logs.String(), "groups stored there are left out") {
		t.Errorf("no log line about the partition left out:\n%s", e.logs.String())
	}
}

// TestDiskFullENOSPC: on a full disk a write fails with ENOSPC and leaves
// nothing of itself behind.
func TestDiskFullENOSPC(t *testing.T) {
	testutil.NeedFUSE(t)
	data := t.TempDir()
	if err := syscall.Mount("tmpfs", data, "tmpfs", 0, "size=3m"); err != nil {
		t.Skipf("cannot mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(data, syscall.MNT_DETACH) })
	e := mountAt(t, data, mountOpt{defaults: map[string]string{"segment.index.bytes": "4096"}})
	e.closeErrOK = true
	e.Sh("mkdir t")
	line := strings.Repeat("z", 1000) + "\n"
	chunk := strings.Repeat(line, 64)
	var n int
	var werr error
	for n = 0; n < 1000; n++ {
		if werr = e.AppendOnce("t/0/log", chunk); werr != nil {
			break
		}
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("after %d chunks: %v, want ENOSPC", n, werr)
	}
	want := n * 64
	if got := e.Sh("wc -l < t/0/log"); got != fmt.Sprintf("%d\n", want) {
		t.Fatalf("log has %s lines, want %d (the failed write left records behind?)", got, want)
	}
	if got := e.Sh("stat -c %s t/0/log"); got != fmt.Sprintf("%d\n", want*len(line)) {
		t.Fatalf("size %s, want %d", got, want*len(line))
	}
}

// damageSegment unmounts e, changes the bytes of the first segment file of
// t/0 with damage and mounts the data directory again: it returns the new
// mount and the file's path.
func damageSegment(e *env, damage func(b []byte)) (*env, string) {
	e.t.Helper()
	e.Unmount()
	seg := filepath.Join(e.data, "t-0", "00000000000000000000.log")
	b, err := os.ReadFile(seg)
	if err != nil {
		e.t.Fatal(err)
	}
	damage(b)
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return mountAt(e.t, e.data, mountOpt{}), seg
}

// isEIO reports whether a command failed with EIO.
func isEIO(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Input/output error")
}
