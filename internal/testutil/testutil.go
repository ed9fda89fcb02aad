// Package testutil holds the helpers the tests share: a goroutine-safe
// buffer, a logger whose lines can be asserted on, the FUSE skip rule, the
// one in-process mount harness (Mount) and the shell pipelines run against
// it, the one readiness rule for a `partfs mount` daemon (WaitServing),
// errno extraction (Errno), an in-process Kafka cluster with the kcat
// client to drive it, file reads and writes that fail the test
// (ReadFile, WriteFile), goroutines that repeat until stopped (Spin,
// Every), and a clock that moves only when told (Clock).
package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Logger is a debug-level logrus logger writing plain lines to Buf.
type Logger struct {
	Buf   *SyncBuffer
	Entry *logrus.Entry
}

// NewLogger returns a Logger with an empty buffer.
func NewLogger() Logger {
	b := &SyncBuffer{}
	l := logrus.New()
	l.SetOutput(b)
	l.SetLevel(logrus.DebugLevel)
	l.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true})
	return Logger{Buf: b, Entry: logrus.NewEntry(l)}
}

// NeedFUSE skips t only where /dev/fuse is missing and CI is unset: under
// CI a test that needs FUSE must run.
func NeedFUSE(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil && os.Getenv("CI") == "" {
		t.Skip("no /dev/fuse")
	}
}

// Sh runs script with bash (pipefail) in dir and returns its stdout; it
// kills the script after timeout.
func Sh(dir, script string, timeout time.Duration) (string, error) {
	cmd := exec.Command("bash", "-c", "set -o pipefail; cd '"+dir+"' && "+script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return stdout.String(), &ShError{Err: err, Stderr: stderr.String()}
		}
		return stdout.String(), nil
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return stdout.String(), &ShError{Err: os.ErrDeadlineExceeded, Stderr: stderr.String()}
	}
}

// ShError is a failed script with what it wrote to stderr.
type ShError struct {
	Err    error
	Stderr string
}

func (e *ShError) Error() string { return e.Err.Error() + ": " + strings.TrimSpace(e.Stderr) }

func (e *ShError) Unwrap() error { return e.Err }

// AllocatedBytes is the bytes of disk blocks the file at path holds, which
// may be more than its size (blocks reserved past the end) or less.
func AllocatedBytes(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
}
