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
	e.sh("mkdir t")
	e.sh("echo blue > t/0/@key/color && echo green >> t/0/@key/color && printf 'x' > t/0/@key/other")
	if got := e.sh("cat t/0/@key/color"); got != "green\n" {
		t.Fatalf("@key/color = %q", got)
	}
	if got := e.sh("jq -c '[.key,.value]' t/0/log.jsonl"); got != `["color","blue"]`+"\n"+`["color","green"]`+"\n"+`["other","x"]`+"\n" {
		t.Fatalf("records %q", got)
	}
	e.sh("rm t/0/@key/color")
	if _, err := os.Stat(e.path("t/0/@key/color")); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("stat after rm: %v", err)
	}
	if got := e.sh("tail -1 t/0/log.jsonl | jq -c '[.key,.value]'"); got != `["color",null]`+"\n" {
		t.Fatalf("tombstone %q", got)
	}
	if got := e.sh("cat t/0/log"); got != "blue\ngreen\nx\n" {
		t.Fatalf("plain view shows the tombstone: %q", got)
	}
	if got := e.sh("cat t/0/@key/other"); got != "x\n" {
		t.Fatalf("@key/other = %q", got)
	}
	if _, err := e.try("cat t/0/@key/never"); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("missing key: %v", err)
	}
}

func TestMetricsFile(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.sh("mkdir t && seq 1 5 >> t/0/log && cat t/0/log > /dev/null")
	if got := e.sh("ls -a | grep -c metrics"); got != "1\n" {
		t.Fatalf(".metrics not listed")
	}
	if got := e.sh("cat .metrics"); !strings.Contains(got, `partfs_appended_records_total{partition="0",topic="t"} 5`) {
		t.Fatalf(".metrics lacks the append counter:\n%s", got)
	}
}
