package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// writeCompactedTopic writes topic t (compacted, small segments) with 10
// keys updated 20 times each, and closes the store.
func writeCompactedTopic(t *testing.T, dir string) {
	st, err := logstore.Open(dir, logstore.Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "cleanup.policy", Value: "compact"}, {Key: "segment.bytes", Value: "1000"}}); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	for i := 0; i < 200; i++ {
		if _, err := l.Append([]record.Record{{Key: fmt.Appendf(nil, "k%d", i%10), Value: fmt.Appendf(nil, "v%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCompactCommand(t *testing.T) {
	dir := t.TempDir()
	writeCompactedTopic(t, dir)
	var out, errb bytes.Buffer
	if code := runCompact([]string{dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	sum := out.String()
	if !strings.HasPrefix(sum, "cleaned 1 of 1 compacted partitions: read ") || !strings.Contains(sum, "removed ") || strings.Contains(sum, "removed 0 of") {
		t.Fatalf("summary %q", sum)
	}
	if !strings.Contains(errb.String(), "compact: ") {
		t.Fatalf("no progress line on stderr: %q", errb.String())
	}

	st, err := logstore.Open(dir, logstore.Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	segs, release := l.Segments()
	n := 0
	for _, s := range segs {
		l.Read(s, s.Base, func(*record.Record) bool { n++; return true })
	}
	release()
	st.Close()
	if n >= 200 || n < 10 {
		t.Fatalf("%d records left after compaction, want 10..199", n)
	}

	out.Reset()
	want := "not cleaned: t-0: only the active segment is dirty (the cleaner never cleans it; it rolls at segment.bytes or segment.ms)\ncleaned 0 of 1 compacted partitions: read 0 bytes"
	if code := runCompact([]string{dir}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), want) {
		t.Fatalf("second run: exit %d, %q", code, out.String())
	}
}

func TestCompactCommandErrors(t *testing.T) {
	dir := t.TempDir()
	writeCompactedTopic(t, dir)
	var out, errb bytes.Buffer
	if code := runCompact([]string{dir, "nosuch"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "nosuch") {
		t.Fatalf("unknown topic: exit %d, %q", code, errb.String())
	}
	if code := runCompact(nil, &out, &errb); code != 2 {
		t.Fatalf("no DATADIR: exit %d", code)
	}
	if code := runCompact([]string{"--log-level", "loud", dir}, &out, &errb); code != 2 {
		t.Fatalf("bad log level: exit %d", code)
	}
}

// TestCompactSaysWhyNot: a topic without compact is not counted, and a
// compacted one left alone is named with the reason.
func TestCompactSaysWhyNot(t *testing.T) {
	dir := t.TempDir()
	writeCompactedTopic(t, dir)
	st, err := logstore.Open(dir, logstore.Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTopic("d"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runCompact([]string{"--config", "min.cleanable.dirty.ratio=1", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "not cleaned: t-0: dirty ratio 1.000 is not above min.cleanable.dirty.ratio 1 (--force cleans anyway)\ncleaned 0 of 1 compacted partitions:"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("output %q, want it to start with %q", out.String(), want)
	}
}

// TestCompactUnopenedTopicFails: a topic whose stored configuration has a
// bad value is not opened; compact names it and exits 1, named or not.
func TestCompactUnopenedTopicFails(t *testing.T) {
	dir := t.TempDir()
	writeCompactedTopic(t, dir)
	stored := `{"version":1,"topics":{"t":{"cleanup.policy":"compact","segment.bytes":"banana"}}}`
	if err := os.WriteFile(filepath.Join(dir, "partfs-topics.json"), []byte(stored), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{dir, "t"}, {dir}} {
		var out, errb bytes.Buffer
		if code := runCompact(args, &out, &errb); code != 1 || !strings.Contains(out.String(), "t-0 not opened") {
			t.Errorf("compact %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
	}
}
