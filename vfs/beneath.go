package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrOutside is matched by the error of a Beneath filesystem for a name
// outside its root or a path through a symbolic link.
var ErrOutside = errors.New("outside the data directory or through a symbolic link")

// ErrLinked is matched by the error of a Beneath filesystem's open for
// writing of a regular file with more than one hard link: its other names
// may lie outside the root, so it is refused like a symbolic link.
var ErrLinked = errors.New("a file with more than one hard link")

// Beneath returns the operating system's filesystem confined to root: every
// name below root is resolved from root without following any symbolic
// link (openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, and *at calls on
// the parent directory for removals, renames and times), so no open,
// create, truncate, rename or removal reaches a file outside root. Root
// itself is used as given. Names outside root are refused, except root's
// own ancestors for SyncDir and Stat (making root's creation durable).
// A relative root, and a relative name, are taken from the working
// directory (as the kernel does), so a name and its absolute spelling are
// the same file.
func Beneath(root string) FS {
	return &beneathFS{root: absPath(root)}
}

// absPath is name made absolute from the working directory, and clean.
func absPath(name string) string {
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return filepath.Clean(name)
}

type beneathFS struct {
	root string
	mu   sync.Mutex
	fd   int // root directory, opened on first use; 0 = not open
}

const resolveStrict = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS

// rel returns name relative to root: "" for root, ok=false outside root.
func (b *beneathFS) rel(name string) (string, bool) {
	name = absPath(name)
	if name == b.root {
		return "", true
	}
	r, err := filepath.Rel(b.root, name)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(r) {
		return "", false
	}
	return r, true
}

func (b *beneathFS) ancestor(name string) bool {
	name = absPath(name)
	return name == filepath.Dir(b.root) || strings.HasPrefix(b.root, strings.TrimSuffix(name, "/")+"/")
}

func (b *beneathFS) rootFD() (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fd > 0 {
		return b.fd, nil
	}
	fd, err := unix.Open(b.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: b.root, Err: err}
	}
	b.fd = fd
	return fd, nil
}

func outside(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: ErrOutside}
}

// openRel opens rel under root with flags, following no symbolic link.
func (b *beneathFS) openRel(op, name, rel string, flag int, perm uint32) (int, error) {
	root, err := b.rootFD()
	if err != nil {
		return -1, err
	}
	if rel == "" {
		rel = "."
	}
	if flag&(unix.O_CREAT|unix.O_TMPFILE) == 0 {
		perm = 0 // openat2 refuses a mode it would not use
	}
	how := unix.OpenHow{Flags: uint64(flag | unix.O_CLOEXEC), Mode: uint64(perm), Resolve: resolveStrict}
	for {
		fd, err := unix.Openat2(root, rel, &how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: op, Path: name, Err: symlinkErr(err)}
		}
		return fd, nil
	}
}

// symlinkErr names the refusal of a symbolic link: openat2 answers ELOOP
// for a link in the path (or for O_NOFOLLOW on a trailing link) and EXDEV
// for an escape.
func symlinkErr(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return fmt.Errorf("%w (%w)", ErrOutside, err)
	}
	return err
}

// parent opens the directory holding name and returns it with name's base.
func (b *beneathFS) parent(op, name string) (int, string, error) {
	rel, ok := b.rel(name)
	if !ok || rel == "" {
		return -1, "", outside(op, name)
	}
	fd, err := b.openRel(op, name, filepath.Dir(rel), unix.O_PATH|unix.O_DIRECTORY, 0)
	return fd, filepath.Base(rel), err
}

func (b *beneathFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	rel, ok := b.rel(name)
	if !ok {
		return nil, outside("open", name)
	}
	// O_TRUNC waits for the link check: it would cut the other names too
	fd, err := b.openRel("open", name, rel, flag&^os.O_TRUNC, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		if err := writableHere(fd, flag); err != nil {
			unix.Close(fd)
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// writableHere refuses a regular file with more than one hard link and
// then applies O_TRUNC.
func writableHere(fd, flag int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
		return fmt.Errorf("%w (%d links)", ErrLinked, st.Nlink)
	}
	if flag&os.O_TRUNC != 0 {
		return unix.Ftruncate(fd, 0)
	}
	return nil
}

func (b *beneathFS) Create(name string) (File, error) {
	return b.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (b *beneathFS) Open(name string) (File, error) { return b.OpenFile(name, os.O_RDONLY, 0) }

func (b *beneathFS) Remove(name string) error {
	dir, base, err := b.parent("remove", name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	err = unix.Unlinkat(dir, base, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if rerr := unix.Unlinkat(dir, base, unix.AT_REMOVEDIR); rerr != unix.ENOTDIR {
			err = rerr
		}
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// RemoveAll removes name and what it holds, descending only into real
// directories (a symbolic link is removed, never followed).
func (b *beneathFS) RemoveAll(name string) error {
	dir, base, err := b.parent("removeall", name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := removeAllAt(dir, base); err != nil {
		return &os.PathError{Op: "removeall", Path: name, Err: err}
	}
	return nil
}

func removeAllAt(dir int, base string) error {
	err := unix.Unlinkat(dir, base, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	fd, err := unix.Openat(dir, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), base)
	names, err := f.Readdirnames(-1)
	for _, n := range names {
		if rerr := removeAllAt(fd, n); rerr != nil && err == nil {
			err = rerr
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dir, base, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

func (b *beneathFS) Rename(oldname, newname string) error {
	od, obase, err := b.parent("rename", oldname)
	if err != nil {
		return err
	}
	defer unix.Close(od)
	nd, nbase, err := b.parent("rename", newname)
	if err != nil {
		return err
	}
	defer unix.Close(nd)
	if err := unix.Renameat(od, obase, nd, nbase); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// MkdirAll creates root as package os does, then each missing directory
// below it one component at a time, refusing a symbolic link on the way.
func (b *beneathFS) MkdirAll(name string, perm os.FileMode) error {
	rel, ok := b.rel(name)
	if !ok {
		return outside("mkdir", name)
	}
	if err := os.MkdirAll(b.root, perm); err != nil {
		return err
	}
	if rel == "" {
		return nil
	}
	root, err := b.rootFD()
	if err != nil {
		return err
	}
	sofar := ""
	for _, c := range strings.Split(rel, "/") {
		sofar = filepath.Join(sofar, c)
		parent := root
		if d := filepath.Dir(sofar); d != "." {
			fd, err := b.openRel("mkdir", name, d, unix.O_PATH|unix.O_DIRECTORY, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			parent = fd
		}
		if err := unix.Mkdirat(parent, c, uint32(perm.Perm())); err != nil && err != unix.EEXIST {
			return &os.PathError{Op: "mkdir", Path: name, Err: err}
		}
	}
	fd, err := b.openRel("mkdir", name, rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// ReadDir lists directory name sorted by name, entries typed by the
// listing (a symbolic link is listed as one, FS.ReadDir).
func (b *beneathFS) ReadDir(name string) ([]os.DirEntry, error) {
	rel, ok := b.rel(name)
	if !ok {
		return nil, outside("readdir", name)
	}
	fd, err := b.openRel("readdir", name, rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(des, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, nil
}

// Stat describes name without following a symbolic link.
func (b *beneathFS) Stat(name string) (os.FileInfo, error) {
	rel, ok := b.rel(name)
	switch {
	case !ok && b.ancestor(name):
		return os.Stat(name)
	case !ok:
		return nil, outside("stat", name)
	case rel == "":
		return os.Stat(name)
	}
	// O_PATH|O_NOFOLLOW with RESOLVE_NO_SYMLINKS opens a trailing link
	// itself, so the link is described; fstat of that descriptor cannot be
	// raced into a directory swapped for a link after a check of the path.
	fd, err := b.openRel("stat", name, rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return f.Stat()
}

func (b *beneathFS) SyncDir(name string) error {
	rel, ok := b.rel(name)
	if !ok && b.ancestor(name) {
		return Default.SyncDir(name)
	}
	if !ok {
		return outside("fsync", name)
	}
	fd, err := b.openRel("fsync", name, rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("fsync directory %s: %w", name, err)
	}
	return nil
}

// OpenSyncAll opens directory name, inside the root or the root itself,
// for syncfs(2).
func (b *beneathFS) OpenSyncAll(name string) (SyncAll, error) {
	rel, ok := b.rel(name)
	if !ok {
		return nil, outside("open", name)
	}
	if rel == "" {
		return Default.OpenSyncAll(name)
	}
	fd, err := b.openRel("open", name, rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return syncfsHandle{fd, name}, nil
}

func (b *beneathFS) Lock(name string) (io.Closer, error) {
	f, err := b.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return flock(f.(*os.File), name)
}

func (b *beneathFS) Chtimes(name string, atime, mtime time.Time) error {
	dir, base, err := b.parent("chtimes", name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(dir, base, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "chtimes", Path: name, Err: err}
	}
	return nil
}
