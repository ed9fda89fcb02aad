package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/internal/testutil"
)

// quietTopic makes topic t of lines 40,000 lines in several segments, with
// no retention or compaction.
func quietTopic(t *testing.T, e *env) {
	t.Helper()
	e.Sh("mkdir t && echo segment.bytes=262144 >> t/config")
	var b strings.Builder
	for i := 1; i <= 40000; i++ {
		fmt.Fprintf(&b, "line %d of a quiet topic, with some text to make it longer\n", i)
		if i%5000 == 0 {
			if err := e.AppendOnce("t/0/log", b.String()); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if got := e.Sh("grep '^segments:' t/0/stat"); got == "segments: 1\n" {
		t.Fatalf("one segment only")
	}
}

// TestFullReads: every read() returns what was asked for until the end of
// the file, at every size python3 and dd ask for.
func TestFullReads(t *testing.T) {
	e := newEnv(t, mountOpt{})
	quietTopic(t, e)
	for _, f := range []string{"t/0/log", "t/0/log.jsonl", "t/0/@offset/12345"} {
		want := e.Sh("cat " + f)
		for _, size := range []int{10240, 4096, 100001, 3 << 20} {
			script := fmt.Sprintf(`
import os, sys
fd = os.open(%q, os.O_RDONLY)
size = os.fstat(fd).st_size
data, short = bytearray(), 0
while True:
    b = os.read(fd, %d)
    if not b:
        break
    if len(b) != %d and len(data) + len(b) != size:
        short += 1
    data += b
sys.stdout.buffer.write(b"%%d %%d\n" %% (short, len(data)))
`, f, size, size)
			out := e.Sh("python3 -c '" + script + "'")
			if out != fmt.Sprintf("0 %d\n", len(want)) {
				t.Errorf("%s read(%d): short reads and bytes %q, want 0 %d", f, size, out, len(want))
			}
		}
		if got := e.Sh("dd status=none bs=10240 if=" + f); got != want {
			t.Errorf("dd bs=10240 %s: %d bytes differ from cat's %d", f, len(got), len(want))
		}
	}
}

// TestArchiveToolsCopyExactly: tar, cp -r and rsync -a of a quiet topic
// give files byte-identical to cat of each, without a warning, and read
// each record once (nothing under @offset/ or @time/).
func TestArchiveToolsCopyExactly(t *testing.T) {
	needTool(t, "rsync")
	e := newEnv(t, mountOpt{})
	quietTopic(t, e)
	out := t.TempDir()
	copies := map[string]string{
		"tar":   fmt.Sprintf("tar cf %[1]s/x.tar t && mkdir %[1]s/tar && tar xf %[1]s/x.tar -C %[1]s/tar", out),
		"cp":    fmt.Sprintf("mkdir %[1]s/cp && cp -r t %[1]s/cp/", out),
		"rsync": fmt.Sprintf("mkdir %[1]s/rsync && rsync -a t %[1]s/rsync/", out),
	}
	files := strings.Fields(e.Sh("find t -type f | sort"))
	if all := strings.Join(files, " "); !strings.Contains(all, "t/0/log t/0/log.jsonl") || strings.Contains(all, "@") {
		t.Fatalf("find lists %v", files)
	}
	for tool, script := range copies {
		if o, err := e.Try(script + " 2>&1"); err != nil || o != "" {
			t.Errorf("%s: %v: %s", tool, err, o)
			continue
		}
		got := strings.Fields(testSh(t, filepath.Join(out, tool), "find t -type f | sort"))
		if strings.Join(got, " ") != strings.Join(files, " ") {
			t.Errorf("%s copied %v, want %v", tool, got, files)
		}
		for _, f := range files {
			want := e.Sh("cat " + f)
			got, err := os.ReadFile(filepath.Join(out, tool, f))
			if err != nil || string(got) != want {
				t.Errorf("%s of %s: %d bytes (%v), cat gives %d", tool, f, len(got), err, len(want))
			}
		}
	}
}

// TestDuCountsDisk: du of a topic is the disk its segment files take; the
// rendered files take none, whatever their size.
func TestDuCountsDisk(t *testing.T) {
	e := newEnv(t, mountOpt{})
	quietTopic(t, e)
	var disk int64
	for _, name := range strings.Fields(e.Sh("ls t/0/segments")) {
		disk += testutil.AllocatedBytes(t, filepath.Join(e.data, "t-0", name))
	}
	du := e.Sh("du -s --block-size=1 t | cut -f1")
	if du != fmt.Sprintf("%d\n", disk) {
		t.Errorf("du says %s bytes, the segment files take %d", strings.TrimSpace(du), disk)
	}
	size := e.Sh("du -s --block-size=1 --apparent-size t/0/segments/*.index | sort -n | tail -1 | cut -f1")
	if size != "10485760\n" || disk > 8<<20 {
		t.Errorf("active index of %s bytes (want it preallocated), segment files take %d", strings.TrimSpace(size), disk)
	}
	for _, f := range []string{"t/0/log", "t/0/log.jsonl", "t/0/stat", "t/config", ".metrics"} {
		if got := e.Sh("stat -c %b " + f); got != "0\n" {
			t.Errorf("%s takes %s blocks", f, strings.TrimSpace(got))
		}
	}
}

// TestGeneratedSizesMatch: st_size of stat, config and .metrics is what
// a read of the open file returns: grep never takes .metrics for binary,
// and a Python fstat agrees with the bytes read.
func TestGeneratedSizesMatch(t *testing.T) {
	e := newEnv(t, mountOpt{})
	quietTopic(t, e)
	out := e.Sh("for i in $(seq 100); do grep -c . .metrics >/dev/null 2>&1 || echo fail; grep -l . .metrics t/config t/0/stat 2>&1; done | sort | uniq -c")
	if want := "    100 .metrics\n    100 t/0/stat\n    100 t/config\n"; out != want {
		t.Errorf("grep 100 times: %q, want %q", out, want)
	}
	script := `
import os
bad = 0
for i in range(100):
    for f in (".metrics", "t/config", "t/0/stat"):
        with open(f, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = fh.read()
            if size != len(data) or os.fstat(fh.fileno()).st_size != size:
                bad += 1
print(bad)
`
	if got := e.Sh("python3 -c '" + script + "'"); got != "0\n" {
		t.Errorf("%s opens out of 300 had st_size other than the bytes read", strings.TrimSpace(got))
	}
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if !haveTool(name) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (test.sh installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
}

// testSh runs script in dir, outside the mount.
func testSh(t *testing.T, dir, script string) string {
	t.Helper()
	out, err := testutil.Sh(dir, script, time.Minute)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out
}

// TestAppendOnlyLikeChattr: log and log.jsonl refuse every change but an
// append, like `chattr +a` files; the read-only trees refuse every change
// of their entries. Each refusal is EPERM and leaves log and the data
// directory as they were.
func TestAppendOnlyLikeChattr(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && seq 1 1000 >> t/0/log")
	seg := strings.Fields(e.Sh("ls t/0/segments"))[0]
	state := func() string {
		return e.Sh("md5sum t/0/log t/0/log.jsonl && ls -l --time-style=+%s t/0/segments && cd " + e.data + " && find . -type f | sort")
	}
	before := state()
	refused := []string{
		"python3 -c 'open(\"t/0/log\", \"w\")'",                  // O_TRUNC
		"python3 -c 'open(\"t/0/log\", \"r+\").write(\"x\\n\")'", // O_RDWR without O_APPEND
		"python3 -c 'import os; os.open(\"t/0/log.jsonl\", os.O_WRONLY)'",
		"dd if=/dev/zero of=t/0/log bs=1 count=1 conv=notrunc status=none",
		"truncate -s 0 t/0/log",
		"sed -i 1d t/0/log",
		"mv t/0/log t/0/log.old",
		"ln t/0/log t/0/log2",
		"rm -f t/0/log.jsonl",
		"chmod 600 t/0/log",
		"chown 1:1 t/0/log",
		"touch -d 2020-01-01 t/0/log",
		"mv t/0/segments/" + seg + " t/0/segments/x",
		"mv t/0/segments/" + seg + " t/0/",
		"ln t/0/segments/" + seg + " t/0/segments/x",
		"rm -f t/0/segments/" + seg,
		"chmod 600 t/0/segments/" + seg,
		"chown 1:1 t/0/segments/" + seg,
		"touch -d 2020-01-01 t/0/segments/" + seg,
		"touch t/0/segments/" + seg,
		"chmod 600 t/0/@offset/5",
		"touch -d 2020-01-01 t/0/@offset/5",
		"touch -d 2020-01-01 t/0/@time/earliest",
		"ln t/0/log t/0/@offset/99999999",
		"mv t/0/@offset/5 t/0/@offset/6",
		"rm -f t/0/@offset/5",
		"rm -f t/0/@time/earliest",
	}
	for _, cmd := range refused {
		out, err := e.Try(cmd + " 2>&1")
		if err == nil || !strings.Contains(out, "not permitted") {
			t.Errorf("%s: %v %q, want EPERM", cmd, err, out)
		}
	}
	if !haveTool("vim") && os.Getenv("CI") != "" {
		t.Error("vim is not installed (test.sh installs it)")
	}
	if _, err := e.Try("vim -Es -u NONE -c 'normal Goedited' -c wq t/0/log"); err == nil && haveTool("vim") {
		t.Errorf("vim rewrote log without an error")
	}
	if got := state(); got != before {
		t.Errorf("refused changes changed something:\n%s\nwas\n%s", got, before)
	}
	e.Sh("touch t/0/log && echo 1001 >> t/0/log && printf '1002\\n' | tee -a t/0/log >/dev/null")
	e.Sh("printf '1003\\n' | dd of=t/0/log oflag=append conv=notrunc status=none")
	e.Sh("python3 -c 'open(\"t/0/log\", \"a\").write(\"1004\\n\")'")
	if got, want := e.Sh("md5sum < t/0/log"), e.Sh("seq 1 1004 | md5sum"); got != want {
		t.Errorf("appends: log is not seq 1 1004: %s", e.Sh("tail -5 t/0/log"))
	}
}

// TestArchiveToolsAfterRetention: once retention removed the first
// segments, a read from position 0 continues at the first record left, so
// log gives fewer bytes than its st_size (which never shrinks). cp reads
// to the end and copies what cat shows; tar says the file shrank and pads
// its member with NUL bytes up to st_size; rsync refuses the file ("read
// errors mapping", exit 23). @offset/earliest starts at the log start, so
// its size is exact and rsync copies it.
func TestArchiveToolsAfterRetention(t *testing.T) {
	needTool(t, "rsync")
	e := newEnv(t, mountOpt{})
	quietTopic(t, e)
	e.Sh("stat t/0/log t/0/log.jsonl >/dev/null") // a reader saw the positions
	e.Sh("echo retention.bytes=1000000 >> t/config")
	if err := e.st.RunMaintenance(true, false); err != nil {
		t.Fatal(err)
	}
	if e.Sh("grep log_start_offset t/0/stat") == "log_start_offset: 0\n" {
		t.Fatal("retention removed nothing")
	}
	out := checkGappedCopies(t, e, "t/0/log")
	e.Sh("rsync t/0/@offset/earliest " + out + "/earliest")
	if got, err := os.ReadFile(out + "/earliest"); err != nil || string(got) != e.Sh("cat t/0/log") {
		t.Errorf("rsync of @offset/earliest: %d bytes (%v), not what cat of log gives", len(got), err)
	}
}

// TestArchiveToolsAfterCompaction: compaction leaves gaps inside the
// stream; readers skip them, and cp, tar and rsync behave as after
// retention.
func TestArchiveToolsAfterCompaction(t *testing.T) {
	needTool(t, "rsync")
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir kv && printf 'cleanup.policy=compact\\nsegment.bytes=20000\\n' >> kv/config")
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "{\"key\":\"k%d\",\"value\":\"value %d of key k%d\"}\n", i%20, i, i%20)
	}
	if err := e.AppendOnce("kv/0/log.jsonl", b.String()); err != nil {
		t.Fatal(err)
	}
	e.Sh("stat kv/0/log kv/0/log.jsonl >/dev/null") // a reader saw the positions
	c := compact.NewCleaner(compact.Options{})
	if sum, err := c.CleanAll(compact.Targets(e.st), true); err != nil || sum.RecordsRemoved == 0 {
		t.Fatalf("compaction removed %d records: %v", sum.RecordsRemoved, err)
	}
	checkGappedCopies(t, e, "kv/0/log")
	if got := e.Sh("sort kv/0/log | uniq -d | wc -l"); got != "0\n" {
		t.Errorf("%s records read twice", strings.TrimSpace(got))
	}
}

// checkGappedCopies checks what cp, rsync and tar make of file, which
// gives fewer bytes than its st_size, and returns the directory the
// copies are in.
func checkGappedCopies(t *testing.T, e *env, file string) string {
	t.Helper()
	out := t.TempDir()
	want := e.Sh("cat " + file)
	size := e.Sh("stat -c %s " + file)
	if fmt.Sprintf("%d\n", len(want)) == size {
		t.Fatalf("%s gives all of its st_size %s: no gap", file, strings.TrimSpace(size))
	}
	e.Sh("cp " + file + " " + out + "/cp")
	if got, err := os.ReadFile(out + "/cp"); err != nil || string(got) != want {
		t.Errorf("cp of %s: %d bytes (%v), cat gives %d", file, len(got), err, len(want))
	}
	if o, err := e.Try("rsync -a " + file + " " + out + "/rsync 2>&1"); err == nil || !strings.Contains(o, "read errors mapping") {
		t.Errorf("rsync of %s: %v: %s", file, err, o)
	}
	o, err := e.Try(fmt.Sprintf("tar cf %[1]s/x.tar %[2]s 2>&1; mkdir %[1]s/tar && tar xf %[1]s/x.tar -C %[1]s/tar", out, file))
	if err != nil || !strings.Contains(o, file+": File shrank by") {
		t.Errorf("tar of %s: %v: %s", file, err, o)
	}
	got, _ := os.ReadFile(filepath.Join(out, "tar", file))
	if !strings.HasPrefix(string(got), want) || strings.Trim(string(got[len(want):]), "\x00") != "" || fmt.Sprintf("%d\n", len(got)) != size {
		t.Errorf("tar's %s: %d bytes, want cat's %d then NULs to st_size %s", file, len(got), len(want), size)
	}
	return out
}

// TestLongLineWholeOrEFBIG: one write() of a 1.1 MB line, longer than one
// FUSE request, fails whole with EFBIG where max.message.bytes is the
// default (dd copies 0 bytes: no short count; nothing is stored) and is
// stored whole where max.message.bytes allows it.
func TestLongLineWholeOrEFBIG(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t u && echo max.message.bytes=2000000 >> u/config && echo first >> t/0/log && echo first >> u/0/log")
	line := t.TempDir() + "/line"
	e.Sh("head -c 825000 /dev/urandom | base64 -w0 > " + line + " && echo >> " + line)
	dd := "dd if=" + line + " bs=4M oflag=append conv=notrunc"
	if o, err := e.Try(dd + " of=t/0/log 2>&1"); err == nil || !strings.Contains(o, "File too large") || !strings.Contains(o, "\n0 bytes copied") {
		t.Errorf("dd of the long line to t: %v: %s", err, o)
	}
	if got := e.Sh("cat t/0/log"); got != "first\n" {
		t.Errorf("t/0/log holds %d bytes after the refused line", len(got))
	}
	if o, err := e.Try(dd + " of=u/0/log 2>&1"); err != nil || !strings.Contains(o, "\n1100001 bytes") {
		t.Errorf("dd of the long line to u: %v: %s", err, o)
	}
	if got, want := e.Sh("tail -n +2 u/0/log | md5sum"), e.Sh("md5sum < "+line); got != want || e.Sh("grep -c . u/0/log") != "2\n" {
		t.Errorf("u/0/log does not hold the line whole as one record")
	}
	if got := e.Sh("echo second >> t/0/log && cat t/0/log"); got != "first\nsecond\n" {
		t.Errorf("t/0/log after a refused line and an append: %q", got)
	}
}

// TestConcurrentAppenders: 8 processes × 10,000 lines land exactly once,
// none torn, each writer's lines in its order.
func TestConcurrentAppenders(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t")
	e.Sh(`for p in $(seq 1 8); do seq -f "writer$p-line%g-padding-padding-padding" 1 10000 >> t/0/log & done; wait`)
	out := e.Sh("cat t/0/log")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 80000 {
		t.Fatalf("%d lines, want 80000", len(lines))
	}
	next := map[int]int{}
	for _, l := range lines {
		var p, n int
		if _, err := fmt.Sscanf(l, "writer%d-line%d-padding-padding-padding", &p, &n); err != nil || !strings.HasSuffix(l, "-padding-padding-padding") {
			t.Fatalf("torn line %q", l)
		}
		if n != next[p]+1 {
			t.Fatalf("writer %d: line %d after %d", p, n, next[p])
		}
		next[p] = n
	}
	for p := 1; p <= 8; p++ {
		if next[p] != 10000 {
			t.Errorf("writer %d: last line %d", p, next[p])
		}
	}
}
