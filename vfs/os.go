package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// osFS is the operating system's filesystem.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (fs osFS) Create(name string) (File, error) {
	return fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (fs osFS) Open(name string) (File, error) { return fs.OpenFile(name, os.O_RDONLY, 0) }

func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (osFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)        { return os.Stat(name) }

func (osFS) Chtimes(name string, atime, mtime time.Time) error {
	return os.Chtimes(name, atime, mtime)
}

// ReadDir lists directory name sorted by name, entries typed by the
// listing (FS.ReadDir).
func (osFS) ReadDir(name string) ([]os.DirEntry, error) { return os.ReadDir(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync directory %s: %w", name, err)
	}
	return d.Close()
}

// OpenSyncAll opens directory name for syncfs(2).
func (osFS) OpenSyncAll(name string) (SyncAll, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return syncfsHandle{fd, name}, nil
}

// syncfsHandle is a descriptor of a directory of the filesystem to sync.
// Linux (5.8 and later) reports to syncfs the write-back errors of the
// filesystem since the descriptor was opened.
type syncfsHandle struct {
	fd   int
	name string
}

func (h syncfsHandle) Sync() error {
	if err := unix.Syncfs(h.fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", h.name, err)
	}
	return nil
}

func (h syncfsHandle) Close() error { return unix.Close(h.fd) }

// Lock takes a non-blocking exclusive flock on name.
func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return flock(f, name)
}

// flock takes a non-blocking exclusive flock on the open lock file f.
func flock(f *os.File, name string) (io.Closer, error) {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, lockHeldError(name)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return osLock{f}, nil
}

// ErrLocked is matched by the error of Lock when another holder has the lock.
var ErrLocked = errors.New("lock held")

func lockHeldError(name string) error {
	return fmt.Errorf("data directory %s is in use by another partfs (lock held on %s): %w",
		filepath.Dir(name), name, ErrLocked)
}

type osLock struct{ f *os.File }

func (l osLock) Close() error {
	err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
