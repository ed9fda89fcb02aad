package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quietTopic makes topic t of lines 40,000 lines in several segments, with
// no retention or compaction.
func quietTopic(t *testing.T, e *env) {
	t.Helper()
	e.sh("mkdir t && echo segment.bytes=262144 >> t/config")
	var b strings.Builder
	for i := 1; i <= 40000; i++ {
		fmt.Fprintf(&b, "line %d of a quiet topic, with some text to make it longer\n", i)
		if i%5000 == 0 {
			if err := e.appendOnce("t/0/log", b.String()); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if got := e.sh("grep '^segments:' t/0/stat"); got == "segments: 1\n" {
		t.Fatalf("one segment only")
	}
}

// TestFullReads: every read() returns what was asked for until the end of
// the file, at every size python3 and dd ask for.
func TestFullReads(t *testing.T) {
	e := newEnv(t, mountOpt{})
	quietTopic(t, e)
	for _, f := range []string{"t/0/log", "t/0/log.jsonl", "t/0/@offset/12345"} {
		want := e.sh("cat " + f)
		for _, size := range []int{10240, 4096, 100001, 3 << 20} {
			script := fmt.Sprintf(`
import os, sys
fd = os.open(%q, os.O_RDONLY)
size = os.fstat(fd).st_size
data, short = b"", 0
while True:
    b = os.read(fd, %d)
    if not b:
        break
    if len(b) != %d and len(data) + len(b) != size:
        short += 1
    data += b
sys.stdout.buffer.write(b"%%d %%d\n" %% (short, len(data)))
`, f, size, size)
			out := e.sh("python3 -c '" + script + "'")
			if out != fmt.Sprintf("0 %d\n", len(want)) {
				t.Errorf("%s read(%d): short reads and bytes %q, want 0 %d", f, size, out, len(want))
			}
		}
		if got := e.sh("dd status=none bs=10240 if=" + f); got != want {
			t.Errorf("dd bs=10240 %s: %d bytes differ from cat's %d", f, len(got), len(want))
		}
	}
}

// TestArchiveToolsCopyExactly: tar, cp -r and rsync -a of the views of a
// quiet topic give files byte-identical to cat of each, without warnings.
func TestArchiveToolsCopyExactly(t *testing.T) {
	if !haveTool("rsync") {
		if os.Getenv("CI") != "" {
			t.Fatal("rsync is not installed (test.sh installs it)")
		}
		t.Skip("rsync is not installed")
	}
	e := newEnv(t, mountOpt{})
	quietTopic(t, e)
	out := t.TempDir()
	files := []string{"log", "log.jsonl"}
	list := strings.Join(files, " ")
	copies := map[string]string{
		"tar":   fmt.Sprintf("tar cf %[1]s/x.tar -C t/0 %[2]s && mkdir %[1]s/tar && tar xf %[1]s/x.tar -C %[1]s/tar", out, list),
		"cp":    fmt.Sprintf("mkdir %[1]s/cp && cd t/0 && cp %[2]s %[1]s/cp/", out, list),
		"rsync": fmt.Sprintf("mkdir %[1]s/rsync && cd t/0 && rsync -a %[2]s %[1]s/rsync/", out, list),
	}
	for tool, script := range copies {
		if _, err := e.try(script); err != nil {
			t.Errorf("%s: %v", tool, err)
			continue
		}
		for _, f := range files {
			want := e.sh("cat t/0/" + f)
			got, err := os.ReadFile(filepath.Join(out, tool, f))
			if err != nil || string(got) != want {
				t.Errorf("%s of %s: %d bytes (%v), cat gives %d", tool, f, len(got), err, len(want))
			}
		}
	}
}
