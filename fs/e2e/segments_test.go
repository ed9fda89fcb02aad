package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSegmentsServesOnlyKafkaFiles: segments/ lists and serves only Kafka's
// own files of the partition, never through a symbolic link: links in the
// partition directory to a root-only file outside the data directory (one
// under a Kafka segment name) are neither listed nor readable, nor are
// partfs's own sidecars; the real files read byte for byte and report
// their real blocks.
func TestSegmentsServesOnlyKafkaFiles(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && printf 'one\\ntwo\\nthree\\n' >> t/0/log")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root-only secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(e.data, "t-0")
	for _, name := range []string{"notes.txt", "00000000000000000042.log", "00000000000000000042.index"} {
		if err := os.Symlink(secret, filepath.Join(part, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(part, "notes-regular.txt"), []byte("not Kafka's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(part, "fs-positions.partfs"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls := e.Sh("ls t/0/segments")
	for _, name := range strings.Fields(ls) {
		if !strings.HasPrefix(name, "00000000000000000000.") && name != "leader-epoch-checkpoint" && name != "partition.metadata" {
			t.Errorf("segments/ lists %q:\n%s", name, ls)
		}
	}
	if !strings.Contains(ls, "00000000000000000000.log\n") {
		t.Fatalf("segments/ lacks the .log:\n%s", ls)
	}
	for _, name := range []string{"notes.txt", "00000000000000000042.log", "00000000000000000042.index", "notes-regular.txt", "fs-positions.partfs"} {
		out, err := e.Try("cat t/0/segments/" + name)
		if err == nil || !strings.Contains(err.Error(), "No such file") || strings.Contains(out, "secret") {
			t.Errorf("cat segments/%s: %q, %v; want ENOENT", name, out, err)
		}
	}
	e.Sh("cmp t/0/segments/00000000000000000000.log " + filepath.Join(part, "00000000000000000000.log"))
	want := e.Sh("stat -c '%s %b' " + filepath.Join(part, "00000000000000000000.log") + " " + filepath.Join(part, "00000000000000000000.index"))
	got := e.Sh("stat -c '%s %b' t/0/segments/00000000000000000000.log t/0/segments/00000000000000000000.index")
	if got != want {
		t.Errorf("segments/ size and blocks %q, on disk %q", got, want)
	}
	if strings.Contains(e.logs.String(), "root-only secret") {
		t.Error("the secret reached the log")
	}
}

// fuseReads is the count of FUSE read requests the daemon answered, from
// .metrics, read with one pread (one request, whatever its size).
func fuseReads(t testing.TB, e *env) int {
	t.Helper()
	f, err := os.Open(e.Path(".metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, err := f.ReadAt(buf, 0)
	if err != io.EOF && (err != nil || n == len(buf)) {
		t.Fatalf("read .metrics: %d bytes, %v", n, err)
	}
	for _, l := range strings.Split(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(l, `partfs_fuse_operations_total{op="read"} `); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf(".metrics: %q", l)
			}
			return n
		}
	}
	return 0
}

// passthroughExpected: the kernel takes FUSE passthrough (Linux 6.9 and
// up) and we may hand it files (root).
func passthroughExpected(t *testing.T) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
	return os.Geteuid() == 0 && (major > 6 || major == 6 && minor >= 9)
}

// segmentsBytes writes lines to t/0 (small segments), then compares cat
// of every segments/ .log with the data directory's file.
func segmentsBytes(t *testing.T, e *env) {
	e.Sh("mkdir t && echo segment.bytes=65536 >> t/config && seq 1 40000 >> t/0/log")
	logs, err := filepath.Glob(filepath.Join(e.data, "t-0", "*.log"))
	if err != nil || len(logs) < 3 {
		t.Fatalf("segments %v, %v", logs, err)
	}
	for _, p := range logs {
		e.Sh("cat t/0/segments/" + filepath.Base(p) + " | cmp - " + p)
	}
	if got, want := e.Sh("cat t/0/segments/*.log | wc -c"), e.Sh("cat "+filepath.Join(e.data, "t-0")+"/*.log | wc -c"); got != want {
		t.Errorf("cat segments/*.log: %s bytes, data directory %s", got, want)
	}
}

// TestSegmentsPassthrough: with kernel passthrough, cat of segments/ files
// gives the data directory's bytes and no read reaches the daemon; the
// mount says so once.
func TestSegmentsPassthrough(t *testing.T) {
	e := newEnv(t, mountOpt{})
	before := fuseReads(t, e)
	segmentsBytes(t, e)
	reads := fuseReads(t, e) - before
	logged := strings.Count(e.logs.String(), "segments/ files are read through kernel passthrough")
	switch {
	case logged == 1 && reads != 0:
		t.Errorf("passthrough on, yet %d reads reached the daemon", reads)
	case logged != 1 && passthroughExpected(t):
		t.Errorf("passthrough not on (logged %d times):\n%s", logged, e.logs.String())
	case logged != 1:
		t.Logf("this kernel refuses passthrough; %d reads through the daemon", reads)
	}
}

// TestSegmentsWithoutPassthrough: the daemon serves the same bytes where
// passthrough is off, and the mount says so once.
func TestSegmentsWithoutPassthrough(t *testing.T) {
	e := newEnv(t, mountOpt{noPassthrough: true})
	before := fuseReads(t, e)
	segmentsBytes(t, e)
	if reads := fuseReads(t, e) - before; reads == 0 {
		t.Error("no read reached the daemon")
	}
	if n := strings.Count(e.logs.String(), "segments/ files are read through the daemon"); n != 1 {
		t.Errorf("logged %d times:\n%s", n, e.logs.String())
	}
}

// TestSegmentsPassthroughAcrossSwap: a segment file open across a
// compaction swap goes on reading the file it opened, and the name read
// afterwards gives the cleaned file's bytes, not the old file's.
func TestSegmentsPassthroughAcrossSwap(t *testing.T) {
	c := mountCompacted(t)
	name := "t/0/segments/00000000000000000000.log"
	disk := filepath.Join(c.data, "t-0", "00000000000000000000.log")
	old, err := os.ReadFile(disk)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(c.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c.clean()
	cleaned, err := os.ReadFile(disk)
	if err != nil || bytes.Equal(cleaned, old) {
		t.Fatalf("the first segment was not rewritten (%v)", err)
	}
	got, err := os.ReadFile(c.Path(name))
	if err != nil || !bytes.Equal(got, cleaned) {
		t.Errorf("after the swap %s reads %d bytes (%v), the cleaned file has %d", name, len(got), err, len(cleaned))
	}
	held, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(held, old) {
		t.Errorf("the open across the swap read %d bytes (%v), the file it opened had %d", len(held), err, len(old))
	}
}
