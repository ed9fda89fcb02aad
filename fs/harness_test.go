package fs

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// needFUSE skips only when /dev/fuse is missing and CI is unset.
func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil && os.Getenv("CI") == "" {
		t.Skip("no /dev/fuse")
	}
}

// testLogger collects log lines for assertions.
type testLogger struct {
	buf *syncBuffer
	lg  *logrus.Entry
}

func newTestLogger() testLogger {
	b := &syncBuffer{}
	l := logrus.New()
	l.SetOutput(b)
	l.SetLevel(logrus.DebugLevel)
	l.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true})
	return testLogger{buf: b, lg: logrus.NewEntry(l)}
}

// mounted is a store mounted on a temporary directory.
type mounted struct {
	t    *testing.T
	dir  string
	fsys *FS
	log  testLogger
}

func mountStore(t *testing.T, st partlog.Store) *mounted {
	t.Helper()
	needFUSE(t)
	m := &mounted{t: t, dir: t.TempDir(), log: newTestLogger()}
	m.fsys = New(Options{Store: st, Logger: m.log.lg})
	srv, err := m.fsys.Mount(m.dir, MountOptions{FsName: "partfs-test"})
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
			_ = syscall.Unmount(m.dir, syscall.MNT_DETACH)
		}
		srv.Wait()
		if err := m.fsys.Close(); err != nil {
			t.Errorf("close fs: %v", err)
		}
	})
	return m
}

func mountMem(t *testing.T, opt memlog.Options) (*mounted, *memlog.Store) {
	st := memlog.New(opt)
	return mountStore(t, st), st
}

// sh runs a bash script in the mount and returns its stdout; it fails the
// test on a non-zero exit.
func (m *mounted) sh(script string) string {
	m.t.Helper()
	out, err := m.try(script)
	if err != nil {
		m.t.Fatalf("%s: %v", script, err)
	}
	return out
}

// try runs a bash script in the mount; the error includes stderr.
func (m *mounted) try(script string) (string, error) {
	// No cmd.Dir: a chdir into our own mount between fork and exec would
	// wait for this (suspended) process to answer FUSE.
	cmd := exec.Command("bash", "-c", "set -o pipefail; cd '"+m.dir+"' && "+script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return stdout.String(), &shError{err: err, stderr: stderr.String()}
		}
		return stdout.String(), nil
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return stdout.String(), &shError{err: os.ErrDeadlineExceeded, stderr: stderr.String()}
	}
}

type shError struct {
	err    error
	stderr string
}

func (e *shError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

func (m *mounted) path(rel string) string { return m.dir + "/" + rel }

// open opens a file of the mount in this process (writes are then single
// write(2) calls).
func (m *mounted) open(rel string, flag int) *os.File {
	m.t.Helper()
	f, err := os.OpenFile(m.path(rel), flag, 0o644)
	if err != nil {
		m.t.Fatalf("open %s: %v", rel, err)
	}
	return f
}

// appendOnce writes data with one write(2) on a fresh O_APPEND open.
func (m *mounted) appendOnce(rel, data string) error {
	f := m.open(rel, os.O_WRONLY|os.O_APPEND)
	_, err := f.Write([]byte(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
