package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionNamesCommit: a build with Go's own VCS stamping, as `go
// install` from a clone makes, prints the clone's commit. (The builds of
// mount.sh and the system tests stamp it with -ldflags: systest's
// TestHelpOnStdout and TestMountScriptRelativePaths check those.)
func TestVersionNamesCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds partfs")
	}
	if fi, err := os.Stat("../../.git"); err != nil || !fi.IsDir() {
		t.Skip("not a clone with a .git directory (Go stamps no commit in a git worktree)")
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "partfs")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(out))
	got, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(got), " commit "+want) {
		t.Errorf("--version %q (%v), want commit %s", got, err, want)
	}
}

func TestVersionLine(t *testing.T) {
	defer func(c string) { commit = c }(commit)
	commit = "0123abc"
	if got := versionLine(); !strings.HasPrefix(got, "partfs ") || !strings.Contains(got, " commit 0123abc go1.") {
		t.Errorf("versionLine() = %q", got)
	}
}
