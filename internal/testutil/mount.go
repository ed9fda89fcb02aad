package testutil

import (
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// ShTimeout bounds one Mount.Sh or Mount.Try script.
const ShTimeout = 90 * time.Second

// Mount is a filesystem served by this process on a temporary directory,
// with the helpers tests drive it with. Every in-process mount of the
// tests is one (fs, fs/e2e, compact).
type Mount struct {
	T   testing.TB
	Dir string // the mount point
	Srv *fuse.Server

	// AfterUnmount runs, in order, once the kernel let go of the mount
	// (close the filesystem, then its store); an error fails the test.
	AfterUnmount []func() error

	unmounts sync.Once
}

// NewMount skips or fails as NeedFUSE says, mounts with mount on a new
// temporary directory, and unmounts at the test's cleanup.
func NewMount(t testing.TB, mount func(dir string) (*fuse.Server, error)) *Mount {
	t.Helper()
	NeedFUSE(t)
	m := &Mount{T: t, Dir: t.TempDir()}
	srv, err := mount(m.Dir)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	m.Srv = srv
	t.Cleanup(m.Unmount)
	return m
}

// Unmount unmounts (detaching lazily if the kernel refuses), waits for
// the server and runs AfterUnmount; only the first call does anything.
func (m *Mount) Unmount() {
	m.unmounts.Do(func() {
		if err := m.Srv.Unmount(); err != nil {
			m.T.Errorf("unmount: %v", err)
			_ = syscall.Unmount(m.Dir, syscall.MNT_DETACH)
		}
		m.Srv.Wait()
		for _, f := range m.AfterUnmount {
			if err := f(); err != nil {
				m.T.Errorf("after unmount: %v", err)
			}
		}
	})
}

// Sh runs a bash script in the mount and returns its stdout; a non-zero
// exit fails the test.
func (m *Mount) Sh(script string) string {
	m.T.Helper()
	out, err := m.Try(script)
	if err != nil {
		m.T.Fatalf("%s: %v", script, err)
	}
	return out
}

// Try runs a bash script in the mount; the error includes stderr. (No
// cmd.Dir: a chdir into the mount between fork and exec would wait for
// this process, suspended there, to answer FUSE; the script cds itself.)
func (m *Mount) Try(script string) (string, error) {
	return Sh(m.Dir, script, ShTimeout)
}

// Path is rel inside the mount.
func (m *Mount) Path(rel string) string { return m.Dir + "/" + rel }

// AppendOnce writes data to rel with one write(2) (AppendOnce).
func (m *Mount) AppendOnce(rel, data string) error { return AppendOnce(m.Path(rel), data) }

// AppendOnce writes data to path with one write(2) on a fresh O_APPEND
// open, and returns the error of the open, the write or the close.
func AppendOnce(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
