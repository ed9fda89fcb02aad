package vfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// CrashFS is an in-memory filesystem that remembers what is durable: file
// data made durable by File.Sync and directory entries (creations, renames,
// removals) made durable by SyncDir of their directory. Crash returns a new
// CrashFS holding only that durable state, as a machine would find it after
// losing power. Names are cleaned with path.Clean; relative names are taken
// from the root. It is safe for concurrent use.
type CrashFS struct {
	mu    sync.Mutex // guards everything below and every node
	root  *node
	locks map[string]bool
	now   func() time.Time
}

// node is a file or a directory (an inode). A node may be reachable from
// several directory maps at once: its current parent and, until the
// parents' SyncDir, the durable maps of former parents.
type node struct {
	dir     bool
	data    []byte           // current contents (files)
	synced  []byte           // contents as of the last File.Sync (files)
	entries map[string]*node // current names (directories)
	durable map[string]*node // names as of the last SyncDir (directories)
	mtime   time.Time
	mode    os.FileMode
}

// NewCrashFS returns an empty in-memory filesystem with a root directory.
func NewCrashFS() *CrashFS {
	return &CrashFS{root: newDir(time.Now()), locks: map[string]bool{}, now: time.Now}
}

// SetClock sets the clock used for modification times.
func (c *CrashFS) SetClock(now func() time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
}

func newDir(t time.Time) *node {
	return &node{dir: true, entries: map[string]*node{}, durable: map[string]*node{}, mtime: t, mode: os.ModeDir | 0o755}
}

// Crash returns a filesystem holding only the durable state of c: each
// directory with the names its last SyncDir saw, each file with the data
// of its last Sync. Locks are not carried over. c itself is unchanged.
func (c *CrashFS) Crash() *CrashFS {
	return c.crash(nil)
}

// CrashTorn is Crash, except that each file whose current data extends its
// synced data keeps a random prefix of the unsynced tail (a torn write:
// some pages reached the disk, some did not), with the kept tail's last
// bytes possibly zeroed.
func (c *CrashFS) CrashTorn(rng *rand.Rand) *CrashFS {
	return c.crash(rng)
}

func (c *CrashFS) crash(rng *rand.Rand) *CrashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[*node]*node{}
	return &CrashFS{root: cloneDurable(c.root, seen, rng), locks: map[string]bool{}, now: c.now}
}

func cloneDurable(n *node, seen map[*node]*node, rng *rand.Rand) *node {
	if m, ok := seen[n]; ok {
		return m
	}
	if !n.dir {
		data := append([]byte(nil), n.synced...)
		if rng != nil {
			data = tornData(n, rng)
		}
		m := &node{data: data, synced: append([]byte(nil), data...), mtime: n.mtime, mode: n.mode}
		seen[n] = m
		return m
	}
	m := newDir(n.mtime)
	seen[n] = m
	for name, child := range n.durable {
		cc := cloneDurable(child, seen, rng)
		m.entries[name] = cc
		m.durable[name] = cc
	}
	return m
}

// tornData keeps the synced data plus a random part of an unsynced tail.
func tornData(n *node, rng *rand.Rand) []byte {
	data := append([]byte(nil), n.synced...)
	if len(n.data) <= len(n.synced) || string(n.data[:len(n.synced)]) != string(n.synced) {
		return data
	}
	tail := n.data[len(n.synced):]
	keep := rng.Intn(len(tail) + 1)
	data = append(data, tail[:keep]...)
	if keep > 0 && rng.Intn(2) == 0 {
		z := rng.Intn(keep) + 1
		clear(data[len(data)-z:])
	}
	return data
}

func split(name string) []string {
	name = path.Clean("/" + name)
	if name == "/" {
		return nil
	}
	return strings.Split(name[1:], "/")
}

// lookup finds name. REQUIRES: c.mu held.
func (c *CrashFS) lookup(name string) (*node, error) {
	n := c.root
	for _, part := range split(name) {
		if !n.dir {
			return nil, pathErr("open", name, errors.New("not a directory"))
		}
		child, ok := n.entries[part]
		if !ok {
			return nil, pathErr("open", name, os.ErrNotExist)
		}
		n = child
	}
	return n, nil
}

// lookupDir finds directory name, refusing another file for op.
// REQUIRES: c.mu held.
func (c *CrashFS) lookupDir(op, name string) (*node, error) {
	n, err := c.lookup(name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, pathErr(op, name, errors.New("not a directory"))
	}
	return n, nil
}

// parent finds the directory holding name and the last element of name.
// REQUIRES: c.mu held.
func (c *CrashFS) parent(name string) (*node, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", pathErr("open", name, os.ErrInvalid)
	}
	dir, err := c.lookup(strings.Join(parts[:len(parts)-1], "/"))
	if err != nil {
		return nil, "", err
	}
	if !dir.dir {
		return nil, "", pathErr("open", name, errors.New("not a directory"))
	}
	return dir, parts[len(parts)-1], nil
}

func pathErr(op, name string, err error) error {
	return &os.PathError{Op: op, Path: name, Err: err}
}

// OpenFile opens name with os.O_* flags.
func (c *CrashFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir, base, err := c.parent(name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.entries[base]
	switch {
	case ok && flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, pathErr("open", name, os.ErrExist)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, os.ErrNotExist)
	case !ok:
		n = &node{mtime: c.now(), mode: perm}
		dir.entries[base] = n
	case n.dir && flag&(os.O_WRONLY|os.O_RDWR) != 0:
		return nil, pathErr("open", name, errors.New("is a directory"))
	}
	if flag&os.O_TRUNC != 0 && !n.dir {
		n.data = nil
		n.mtime = c.now()
	}
	return &memFile{fs: c, n: n, name: name, flag: flag}, nil
}

// Create creates or truncates name.
func (c *CrashFS) Create(name string) (File, error) {
	return c.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// Open opens name read-only.
func (c *CrashFS) Open(name string) (File, error) { return c.OpenFile(name, os.O_RDONLY, 0) }

// Remove removes a file or an empty directory.
func (c *CrashFS) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir, base, err := c.parent(name)
	if err != nil {
		return err
	}
	n, ok := dir.entries[base]
	if !ok {
		return pathErr("remove", name, os.ErrNotExist)
	}
	if n.dir && len(n.entries) > 0 {
		return pathErr("remove", name, errors.New("directory not empty"))
	}
	delete(dir.entries, base)
	return nil
}

// RemoveAll removes name and everything below it; a missing name is fine.
func (c *CrashFS) RemoveAll(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir, base, err := c.parent(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	delete(dir.entries, base)
	return nil
}

// Rename moves oldname to newname, replacing a file at newname.
func (c *CrashFS) Rename(oldname, newname string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	odir, obase, err := c.parent(oldname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	n, ok := odir.entries[obase]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: os.ErrNotExist}
	}
	ndir, nbase, err := c.parent(newname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if old, ok := ndir.entries[nbase]; ok && old.dir && (!n.dir || len(old.entries) > 0) {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: errors.New("target is a directory")}
	}
	delete(odir.entries, obase)
	ndir.entries[nbase] = n
	return nil
}

// MkdirAll creates name and its missing parents.
func (c *CrashFS) MkdirAll(name string, perm os.FileMode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.root
	for _, part := range split(name) {
		child, ok := n.entries[part]
		if !ok {
			child = newDir(c.now())
			n.entries[part] = child
		}
		if !child.dir {
			return pathErr("mkdir", name, errors.New("not a directory"))
		}
		n = child
	}
	return nil
}

// ReadDir lists a directory sorted by name.
func (c *CrashFS) ReadDir(name string) ([]os.DirEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.lookupDir("readdir", name)
	if err != nil {
		return nil, err
	}
	des := make([]os.DirEntry, 0, len(n.entries))
	for base, child := range n.entries {
		des = append(des, fs.FileInfoToDirEntry(child.info(base)))
	}
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	return des, nil
}

// Stat describes name.
func (c *CrashFS) Stat(name string) (os.FileInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.lookup(name)
	if err != nil {
		return nil, err
	}
	return n.info(path.Base(path.Clean("/" + name))), nil
}

// SyncDir makes the current entries of directory name durable.
func (c *CrashFS) SyncDir(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.lookupDir("fsync", name)
	if err != nil {
		return err
	}
	n.durable = make(map[string]*node, len(n.entries))
	for k, v := range n.entries {
		n.durable[k] = v
	}
	return nil
}

// OpenSyncAll returns a handle whose Sync makes the whole filesystem
// durable: every file's data and every directory's entries.
func (c *CrashFS) OpenSyncAll(name string) (SyncAll, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.lookupDir("open", name); err != nil {
		return nil, err
	}
	return crashSyncAll{c}, nil
}

type crashSyncAll struct{ c *CrashFS }

func (h crashSyncAll) Close() error { return nil }

func (h crashSyncAll) Sync() error {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	var walk func(n *node)
	walk = func(n *node) {
		if !n.dir {
			n.synced = append([]byte(nil), n.data...)
			return
		}
		n.durable = make(map[string]*node, len(n.entries))
		for k, v := range n.entries {
			n.durable[k] = v
			walk(v)
		}
	}
	walk(h.c.root)
	return nil
}

// Lock takes an in-memory exclusive lock on name, creating the file.
func (c *CrashFS) Lock(name string) (io.Closer, error) {
	f, err := c.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	f.Close()
	key := path.Clean("/" + name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.locks[key] {
		return nil, lockHeldError(name)
	}
	c.locks[key] = true
	return memLock{c, key}, nil
}

type memLock struct {
	c   *CrashFS
	key string
}

func (l memLock) Close() error {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	delete(l.c.locks, l.key)
	return nil
}

// Chtimes sets the modification time of name.
func (c *CrashFS) Chtimes(name string, atime, mtime time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.lookup(name)
	if err != nil {
		return err
	}
	n.mtime = mtime
	return nil
}
