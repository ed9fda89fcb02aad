package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sirupsen/logrus"
)

func TestRaiseFDLimit(t *testing.T) {
	var before, after syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	l := logrus.New()
	l.SetOutput(io.Discard)
	raiseFDLimit(logrus.NewEntry(l))
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &after); err != nil {
		t.Fatal(err)
	}
	// The soft limit reaches the hard one; the hard one grows where the
	// process may raise it (CAP_SYS_RESOURCE), up to fs.nr_open.
	if after.Cur != after.Max || after.Max < before.Max || after.Max > max(before.Max, nrOpen()) {
		t.Fatalf("open-file limit %d (hard %d); before %d/%d, nr_open %d", after.Cur, after.Max, before.Cur, before.Max, nrOpen())
	}
}

// TestOthersMayLink: the warning is given only where the kernel lets
// anyone hard-link any file and the data directory is open to others.
func TestOthersMayLink(t *testing.T) {
	dir := t.TempDir()
	sysctl := filepath.Join(t.TempDir(), "protected_hardlinks")
	set := func(v string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(sysctl, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		sysctl string
		mode   os.FileMode
		want   bool
	}{
		{"1", 0o777, false}, {"0", 0o755, false}, {"0", 0o775, true}, {"0", os.ModeSticky | 0o777, true},
	} {
		set(c.sysctl, c.mode)
		if got := othersMayLink(dir, sysctl); got != c.want {
			t.Errorf("protected_hardlinks=%s, mode %v: %v, want %v", c.sysctl, c.mode, got, c.want)
		}
	}
	if othersMayLink(dir, filepath.Join(dir, "none")) {
		t.Error("no sysctl file: warned")
	}
}
