// Package vfs is the filesystem seam of partfs, after pebble's vfs: every
// file and directory operation of the partition log goes through an FS, so
// tests can swap the operating system for an in-memory filesystem that
// simulates crashes (CrashFS) or one that injects errors (NewErrorFS). It
// also owns the one durable-rename helper, WriteFileDurable, block
// reservation past a file's end (Allocate), and the
// open-file budget: BudgetFS keeps at most N files open, closing idle ones
// and reopening them on demand, so many partitions fit a process's
// RLIMIT_NOFILE. It imports nothing else of partfs.
package vfs

import (
	"io"
	"os"
	"time"
)

// File is an open file. *os.File satisfies it.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	io.Closer
	// Sync makes the file's data durable (fsync).
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Name() string
}

// FS is a filesystem. Names are slash-separated paths as for package os.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Create creates or truncates name for reading and writing.
	Create(name string) (File, error)
	// Open opens name read-only.
	Open(name string) (File, error)
	Remove(name string) error
	RemoveAll(name string) error
	// Rename renames oldname to newname, replacing newname if it exists.
	Rename(oldname, newname string) error
	MkdirAll(name string, perm os.FileMode) error
	// ReadDir lists the entries of directory name sorted by name, each
	// with the type the listing itself gives (getdents' d_type): nothing is
	// stat'ed until an entry's Info is asked for, which describes the entry
	// without following a symbolic link.
	ReadDir(name string) ([]os.DirEntry, error)
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes the directory's entries (creations, renames, removals
	// inside it) durable.
	SyncDir(name string) error
	// Lock takes an exclusive lock on the file name (created if missing).
	// If another holder has it, the error names the directory and the lock
	// file. Close releases it.
	Lock(name string) (io.Closer, error)
	Chtimes(name string, atime, mtime time.Time) error
	// OpenSyncAll returns a handle on the filesystem holding directory
	// name, whose Sync makes everything written to it durable at once.
	OpenSyncAll(name string) (SyncAll, error)
}

// SyncAll is a handle on a filesystem (syncfs(2) on Linux): one flush of
// everything instead of an fsync per file and directory.
type SyncAll interface {
	// Sync makes every file's data and every directory's entries on the
	// filesystem durable, as File.Sync and SyncDir would for each, and
	// reports a write-back error that happened on the filesystem since
	// the handle was opened.
	Sync() error
	Close() error
}

// Default is the operating system's filesystem.
var Default FS = osFS{}
