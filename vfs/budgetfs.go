package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BudgetFS is an FS that keeps at most a budget of files open: the files it
// opens are closed least-recently-used when more are open, and reopened on
// demand (by their current name, with their original flags minus O_CREATE,
// O_EXCL and O_TRUNC) when next used. To its callers each File behaves like
// an open descriptor:
//
//   - An operation in flight is never closed under it.
//   - Rename (of a file or a directory) updates the names of the open
//     files it moves, so they reopen under the new name.
//   - Before Remove, RemoveAll or a Rename over an existing name makes an
//     open file's name go away, the file is reopened if needed and pinned
//     (never evicted) until it is closed, so its holders keep reading it.
//   - Write keeps its own position; with O_APPEND the kernel appends.
//   - Sync on a reopened descriptor flushes the file's data: fsync works on
//     the inode, whichever descriptor asks (Linux). Caveat: a writeback
//     error that the kernel reported to an earlier descriptor of the file
//     (or to another process) before the reopen is not reported again; an
//     error that nobody has seen yet is still reported (Linux >= 4.16).
//
// Only names that go through this FS are tracked: a file renamed or removed
// behind its back fails on its next reopen. Pinned files and files in use
// may take the count past the budget for a while. The budget is kept by
// closing idle files before each open; if the open still fails with EMFILE
// or ENFILE, an eighth of the idle files are closed and the open retried
// once.
//
// Locking: nameMu orders names: Rename, Remove and RemoveAll hold it for
// writing; opening a file by name (OpenFile, a reopen) holds it for
// reading. mu guards the bookkeeping below and each budgetFile's fields
// marked so; no system call runs under mu.
type BudgetFS struct {
	inner FS
	max   int

	nameMu sync.RWMutex

	mu     sync.Mutex
	open   int                                 // descriptors held or being opened
	lru    budgetFile                          // ring sentinel: open, unpinned files, most recent first
	byName map[string]map[*budgetFile]struct{} // current key -> open handles
	dirs   map[string]int                      // directory key -> handles below it
	stats  BudgetStats
}

// BudgetStats counts a BudgetFS's descriptors and events.
type BudgetStats struct {
	Open      int   // descriptors held now
	Files     int   // handles not yet closed (open or evicted)
	Pinned    int   // handles whose name is gone, held open until closed
	Evictions int64 // descriptors closed to keep the budget
	Reopens   int64 // descriptors reopened on demand
}

// NewBudgetFS returns an FS over inner that keeps at most maxOpen of its
// files open at once (at least 1).
func NewBudgetFS(inner FS, maxOpen int) FS {
	return newBudgetFS(inner, maxOpen)
}

func newBudgetFS(inner FS, maxOpen int) *BudgetFS {
	c := &BudgetFS{inner: inner, max: max(maxOpen, 1), byName: map[string]map[*budgetFile]struct{}{}, dirs: map[string]int{}}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// Stats returns the current counts.
func (c *BudgetFS) Stats() BudgetStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Open = c.open
	return s
}

// OpenFile opens name through inner and tracks it.
func (c *BudgetFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	key, err := pathKey(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	c.nameMu.RLock()
	defer c.nameMu.RUnlock()
	f, err := c.openInner(name, flag, perm)
	if err != nil {
		return nil, err
	}
	cf := &budgetFile{c: c, name: f.Name(), flag: flag &^ (os.O_CREATE | os.O_EXCL | os.O_TRUNC), append: flag&os.O_APPEND != 0}
	c.mu.Lock()
	cf.f = f
	c.register(cf, key)
	c.lruFront(cf)
	c.stats.Files++
	c.mu.Unlock()
	return cf, nil
}

// Create creates or truncates name for reading and writing.
func (c *BudgetFS) Create(name string) (File, error) {
	return c.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// Open opens name read-only.
func (c *BudgetFS) Open(name string) (File, error) { return c.OpenFile(name, os.O_RDONLY, 0) }

// openInner makes room for one more descriptor and opens name. REQUIRES:
// nameMu held (either mode).
func (c *BudgetFS) openInner(name string, flag int, perm os.FileMode) (File, error) {
	c.mu.Lock()
	c.open++
	victims := c.evictLocked(0)
	c.mu.Unlock()
	closeAll(victims)
	f, err := c.inner.OpenFile(name, flag, perm)
	if err != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
		c.mu.Lock()
		victims = c.evictLocked(c.open/8 + 1)
		c.mu.Unlock()
		closeAll(victims)
		f, err = c.inner.OpenFile(name, flag, perm)
	}
	if err != nil {
		c.mu.Lock()
		c.open--
		c.mu.Unlock()
		return nil, err
	}
	return f, nil
}

// Rename renames oldname (a file or a directory) to newname. Open files
// at or below oldname follow it; one at newname is pinned first.
func (c *BudgetFS) Rename(oldname, newname string) error {
	okey, err1 := pathKey(oldname)
	nkey, err2 := pathKey(newname)
	if err := errors.Join(err1, err2); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	c.nameMu.Lock()
	defer c.nameMu.Unlock()
	var replaced []*budgetFile
	if okey != nkey {
		var err error
		if replaced, err = c.pinUnder(nkey); err != nil {
			return fmt.Errorf("rename %s to %s: keep the replaced file open: %w", oldname, newname, err)
		}
	}
	if err := c.inner.Rename(oldname, newname); err != nil {
		c.unpin(replaced)
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.orphanLocked(replaced)
	c.moveLocked(okey, nkey)
	return nil
}

// Remove removes name; open files at or below it are pinned first.
func (c *BudgetFS) Remove(name string) error {
	return c.removeWith(name, c.inner.Remove)
}

// RemoveAll removes name and everything below it; open files there are
// pinned first.
func (c *BudgetFS) RemoveAll(name string) error {
	return c.removeWith(name, c.inner.RemoveAll)
}

func (c *BudgetFS) removeWith(name string, remove func(string) error) error {
	key, err := pathKey(name)
	if err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	c.nameMu.Lock()
	defer c.nameMu.Unlock()
	pinned, err := c.pinUnder(key)
	if err != nil {
		return fmt.Errorf("remove %s: keep its open files open: %w", name, err)
	}
	if err := remove(name); err != nil {
		c.unpin(pinned)
		return err
	}
	c.mu.Lock()
	c.orphanLocked(pinned)
	c.mu.Unlock()
	return nil
}

// MkdirAll delegates to inner.
func (c *BudgetFS) MkdirAll(name string, perm os.FileMode) error { return c.inner.MkdirAll(name, perm) }

// ReadDir delegates to inner.
func (c *BudgetFS) ReadDir(name string) ([]os.DirEntry, error) { return c.inner.ReadDir(name) }

// Stat delegates to inner.
func (c *BudgetFS) Stat(name string) (os.FileInfo, error) { return c.inner.Stat(name) }

// SyncDir delegates to inner.
func (c *BudgetFS) SyncDir(name string) error { return c.inner.SyncDir(name) }

// OpenSyncAll delegates to inner: the filesystem's sync reaches files
// whose descriptors were closed to keep the budget.
func (c *BudgetFS) OpenSyncAll(name string) (SyncAll, error) { return c.inner.OpenSyncAll(name) }

// Lock delegates to inner; the lock's descriptor is not counted.
func (c *BudgetFS) Lock(name string) (io.Closer, error) { return c.inner.Lock(name) }

// Chtimes delegates to inner.
func (c *BudgetFS) Chtimes(name string, atime, mtime time.Time) error {
	return c.inner.Chtimes(name, atime, mtime)
}

// pathKey is name made absolute and clean, so every spelling of a path
// finds the same open files.
func pathKey(name string) (string, error) {
	if filepath.IsAbs(name) {
		return filepath.Clean(name), nil
	}
	return filepath.Abs(name)
}

// under reports whether key is dir or below it.
func under(key, dir string) bool {
	return key == dir || strings.HasPrefix(key, dir) && (dir == "/" || key[len(dir)] == '/')
}
