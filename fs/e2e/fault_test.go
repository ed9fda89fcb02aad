package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

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
	e.Unmount()
	seg := filepath.Join(e.data, "t-0", "00000000000000000000.log")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(b), "batch6-a")
	b[at] ^= 0x20 // 'b' -> 'B': a CRC mismatch in the 7th batch
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var good string // the records before the corrupt batch
	for i := 0; i < 6; i++ {
		good += fmt.Sprintf("batch%d-a\nbatch%d-b\n", i, i)
	}
	r := mountAt(t, e.data, mountOpt{})
	// The first open reads through the kernel's page cache, where a short
	// read is the end of the file: the request fails whole. From then on
	// opens read with direct I/O: the records before the corrupt batch,
	// then EIO.
	for i := 0; i < 2; i++ {
		out, err := r.Try("cat t/0/log")
		if err == nil || !strings.Contains(err.Error(), "Input/output error") {
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
