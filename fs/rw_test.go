package fs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/partfs/partfs/partlog/memlog"
)

func TestPlainAppendAndRead(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t && seq 1 200000 >> t/0/log")
	l, _ := st.Log("t", 0)
	if l.EndOffset() != 200000 {
		t.Fatalf("end offset %d", l.EndOffset())
	}
	checks := map[string]string{
		"wc -l < t/0/log":                      "200000\n",
		"sed -n 100000p t/0/log":               "100000\n",
		"head -1 t/0/@offset/123456":           "123457\n",
		"head -1 t/0/@offset/earliest":         "1\n",
		"wc -c < t/0/@offset/latest":           "0\n",
		"tail -1 t/0/log":                      "200000\n",
		"tail -c 7 t/0/log":                    "200000\n",
		"cat t/0/@offset/10..13":               "11\n12\n13\n",
		"stat -c %s t/0/@offset/10..13":        "9\n",
		"head -1 t/0/log.jsonl | jq -c .value": "\"1\"\n",
	}
	for cmd, want := range checks {
		if strings.Contains(cmd, "jq") && !haveTool("jq") {
			continue
		}
		if got := m.Sh(cmd); got != want {
			t.Errorf("%s = %q, want %q", cmd, got, want)
		}
	}
	if got, want := m.Sh("md5sum < t/0/log"), m.Sh("seq 1 200000 | md5sum"); got != want {
		t.Errorf("log content differs from seq output")
	}
	size := m.Sh("stat -c %s t/0/log")
	if want := m.Sh("seq 1 200000 | wc -c"); size != want {
		t.Errorf("st_size %s, want %s", size, want)
	}
}

// TestHugePartialLineRefused: an unfinished line that can no longer fit
// max.message.bytes is refused (EFBIG) instead of being held without bound.
func TestHugePartialLineRefused(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t")
	f := m.open("t/0/log", os.O_WRONLY|os.O_APPEND)
	chunk := []byte(strings.Repeat("z", 1<<20))
	var err error
	for i := 0; i < 5 && err == nil; i++ {
		_, err = f.Write(chunk)
	}
	if !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("huge partial line: %v", err)
	}
	if _, err := f.Write([]byte("zz\n")); !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("end of the refused line: %v", err)
	}
	if _, err := f.Write([]byte("after\n")); err != nil {
		t.Fatalf("next line: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := m.Sh("cat t/0/log"); got != "after\n" {
		t.Fatalf("log = %q", got)
	}
	if l, _ := st.Log("t", 0); l.EndOffset() != 1 {
		t.Fatalf("%d records", l.EndOffset())
	}
}

// TestViewBlockSize: log and log.jsonl advertise 1 MiB blocks, so cat and
// friends move 1 MiB per FUSE request instead of 128 KiB; windows
// advertise what their lookup rendered, so a reader that sizes its buffer
// by st_blksize (stdio, Python) reads its first line from that rendering.
func TestViewBlockSize(t *testing.T) {
	m, _ := mountMem(t, memlog.Options{})
	m.Sh("mkdir t && echo x >> t/0/log")
	for name, want := range map[string]int{"t/0/log": ioBlock, "t/0/log.jsonl": ioBlock,
		"t/0/@offset/0": firstRender, "t/0/@offset/0.jsonl": firstRender, "t/0/@time/0": firstRender, "t/0/@offset/0..1": firstRender} {
		if got := m.Sh("stat -c %o " + name); got != fmt.Sprintf("%d\n", want) {
			t.Errorf("st_blksize of %s = %q, want %d", name, got, want)
		}
	}
}

// TestShortWriteOfRefusedLineFailsClose: one write() of a 2 MB line to a
// compressed topic's log is cut into FUSE requests; the first is held, the
// second refused (EFBIG), so write() returns a short count; close() then
// fails with EFBIG and nothing is stored.
func TestShortWriteOfRefusedLineFailsClose(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t && echo compression.type=gzip >> t/config")
	f := m.open("t/0/log", os.O_WRONLY|os.O_APPEND)
	line := append(bytes.Repeat([]byte("y"), 2_000_000), '\n')
	n, err := syscall.Write(int(f.Fd()), line)
	if err == nil && n == len(line) {
		t.Fatalf("write() of a 2 MB line stored it whole (%d bytes)", n)
	}
	if err := f.Close(); !errors.Is(err, syscall.EFBIG) && err == nil && n > 0 {
		t.Fatalf("write() returned %d of %d bytes (%v) and close() succeeded", n, len(line), err)
	}
	if l, _ := st.Log("t", 0); l.EndOffset() != 0 {
		t.Fatalf("%d records stored", l.EndOffset())
	}
}
