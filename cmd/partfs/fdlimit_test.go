package main

import (
	"io"
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
