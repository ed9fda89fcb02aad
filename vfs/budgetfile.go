package vfs

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// budgetFile is a File of a BudgetFS: a handle whose descriptor may be
// closed while idle and reopened on the next operation.
type budgetFile struct {
	c      *BudgetFS
	name   string // as opened (Name), like *os.File
	flag   int    // flags for a reopen
	append bool

	// users counts operations in flight. It grows only under c.mu, so an
	// evictor holding c.mu that sees 0 knows none can start.
	users atomic.Int32
	omu   sync.Mutex // serializes reopens of this handle
	wmu   sync.Mutex // guards pos
	pos   int64      // Write position (not O_APPEND)

	// guarded by c.mu
	key        string // current absolute name; "" once the name is gone
	f          File   // nil while evicted
	pinned     bool   // name gone: held open, not in the LRU
	closed     bool
	prev, next *budgetFile
}

func (cf *budgetFile) Name() string { return cf.name }

// use runs op on the handle's descriptor, reopened if it was evicted;
// what names the operation in errors.
func use[T any](cf *budgetFile, what string, op func(File) (T, error)) (T, error) {
	f, err := cf.acquire(what)
	if err != nil {
		var zero T
		return zero, err
	}
	defer cf.release()
	return op(f)
}

func (cf *budgetFile) ReadAt(p []byte, off int64) (int, error) {
	return use(cf, "read", func(f File) (int, error) { return f.ReadAt(p, off) })
}

func (cf *budgetFile) WriteAt(p []byte, off int64) (int, error) {
	return use(cf, "write", func(f File) (int, error) { return f.WriteAt(p, off) })
}

// Write writes at the handle's own position, or at the end with O_APPEND.
func (cf *budgetFile) Write(p []byte) (int, error) {
	f, err := cf.acquire("write")
	if err != nil {
		return 0, err
	}
	defer cf.release()
	if cf.append {
		return f.Write(p)
	}
	cf.wmu.Lock()
	defer cf.wmu.Unlock()
	n, err := f.WriteAt(p, cf.pos)
	cf.pos += int64(n)
	return n, err
}

func (cf *budgetFile) Sync() error {
	_, err := use(cf, "sync", func(f File) (struct{}, error) { return struct{}{}, f.Sync() })
	return err
}

func (cf *budgetFile) Truncate(size int64) error {
	_, err := use(cf, "truncate", func(f File) (struct{}, error) { return struct{}{}, f.Truncate(size) })
	return err
}

func (cf *budgetFile) Stat() (os.FileInfo, error) {
	return use(cf, "stat", File.Stat)
}

// Close closes the handle for good.
func (cf *budgetFile) Close() error {
	c := cf.c
	c.mu.Lock()
	if cf.closed {
		c.mu.Unlock()
		return cf.closedErr("close")
	}
	cf.closed = true
	f := cf.f
	if f != nil {
		c.detachLocked(cf)
	}
	if cf.pinned {
		cf.pinned = false
		c.stats.Pinned--
	}
	if cf.key != "" {
		c.unregister(cf)
	}
	c.stats.Files--
	c.mu.Unlock()
	if f == nil {
		return nil
	}
	return f.Close()
}

// acquire returns the open descriptor, reopening it if evicted, and counts
// the caller as a user until release.
func (cf *budgetFile) acquire(op string) (File, error) {
	c := cf.c
	c.mu.Lock()
	if cf.f != nil {
		f := cf.useLocked()
		c.mu.Unlock()
		return f, nil
	}
	closed := cf.closed
	c.mu.Unlock()
	if closed {
		return nil, cf.closedErr(op)
	}
	c.nameMu.RLock()
	defer c.nameMu.RUnlock()
	return cf.reopen(op)
}

func (cf *budgetFile) release() { cf.users.Add(-1) }

// useLocked counts a user of the open descriptor, moves the file to the
// front of the LRU unless pinned, and returns the descriptor. REQUIRES:
// c.mu held, cf.f open.
func (cf *budgetFile) useLocked() File {
	cf.users.Add(1)
	if !cf.pinned {
		cf.c.lruFront(cf)
	}
	return cf.f
}

// closedErr is the error of op on the file after its Close.
func (cf *budgetFile) closedErr(op string) error {
	return &os.PathError{Op: op, Path: cf.name, Err: os.ErrClosed}
}

// reopen is acquire's slow path: it opens the file again by its current
// name. REQUIRES: c.nameMu held (either mode).
func (cf *budgetFile) reopen(op string) (File, error) {
	c := cf.c
	cf.omu.Lock()
	defer cf.omu.Unlock()
	c.mu.Lock()
	if cf.closed {
		c.mu.Unlock()
		return nil, cf.closedErr(op)
	}
	if cf.f != nil { // another user reopened it
		f := cf.useLocked()
		c.mu.Unlock()
		return f, nil
	}
	key := cf.key
	c.mu.Unlock()
	f, err := c.openInner(key, cf.flag, 0)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reopen as %s: %w", op, cf.name, key, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cf.closed { // closed while reopening
		c.open--
		f.Close()
		return nil, cf.closedErr(op)
	}
	cf.f = f
	c.stats.Reopens++
	cf.users.Add(1)
	c.lruFront(cf)
	return f, nil
}
