package e2e

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestKeyFiles: @key/K reads the latest value, > and >> append a record
// with key K at close, rm appends a tombstone.
func TestKeyFiles(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t")
	e.Sh("echo blue > t/0/@key/color && echo green >> t/0/@key/color && printf 'x' > t/0/@key/other")
	if got := e.Sh("cat t/0/@key/color"); got != "green\n" {
		t.Fatalf("@key/color = %q", got)
	}
	if got := e.Sh("jq -c '[.key,.value]' t/0/log.jsonl"); got != `["color","blue"]`+"\n"+`["color","green"]`+"\n"+`["other","x"]`+"\n" {
		t.Fatalf("records %q", got)
	}
	e.Sh("rm t/0/@key/color")
	if _, err := os.Stat(e.Path("t/0/@key/color")); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("stat after rm: %v", err)
	}
	if got := e.Sh("tail -1 t/0/log.jsonl | jq -c '[.key,.value]'"); got != `["color",null]`+"\n" {
		t.Fatalf("tombstone %q", got)
	}
	if got := e.Sh("cat t/0/log"); got != "blue\ngreen\nx\n" {
		t.Fatalf("plain view shows the tombstone: %q", got)
	}
	if got := e.Sh("cat t/0/@key/other"); got != "x\n" {
		t.Fatalf("@key/other = %q", got)
	}
	if _, err := e.Try("cat t/0/@key/never"); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("missing key: %v", err)
	}
}

func TestMetricsFile(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && seq 1 5 >> t/0/log && cat t/0/log > /dev/null")
	if got := e.Sh("ls -a | grep -c metrics"); got != "1\n" {
		t.Fatalf(".metrics not listed")
	}
	if got := e.Sh("cat .metrics"); !strings.Contains(got, `partfs_appended_records_total{partition="0",topic="t"} 5`) {
		t.Fatalf(".metrics lacks the append counter:\n%s", got)
	}
	if got := e.Sh("cat .metrics"); !strings.Contains(got, `partfs_fuse_operations_total{op="read"}`) {
		t.Fatalf(".metrics lacks FUSE operation counts")
	}
}

// TestConfigPersistsAcrossMounts: config writes survive a remount; mount
// --config defaults show where the topic sets nothing.
func TestConfigPersistsAcrossMounts(t *testing.T) {
	data := t.TempDir()
	e := mountAt(t, data, mountOpt{})
	e.Sh("mkdir t && echo retention.ms=12345 >> t/config")
	e.Unmount()
	r := mountAt(t, data, mountOpt{defaults: map[string]string{"retention.ms": "999", "segment.bytes": "1048576"}})
	got := r.Sh("grep -E '^(retention.ms|segment.bytes)=' t/config")
	if got != "segment.bytes=1048576\nretention.ms=12345\n" && got != "retention.ms=12345\nsegment.bytes=1048576\n" {
		t.Fatalf("config after remount: %q", got)
	}
}
