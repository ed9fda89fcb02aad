package fs

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// keyDir is @key/: K is the latest value of key K; writing K appends a
// record with key K at close; rm K appends a tombstone.
type keyDir struct {
	dir
	p *part
}

// Readdir lists nothing: keys are looked up, not enumerated.
func (d *keyDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream(nil), 0
}

func (d *keyDir) node(key string) *keyNode {
	return &keyNode{p: d.p, key: key, lg: d.p.lg.WithField("file", "@key/"+key)}
}

func (d *keyDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	n := d.node(name)
	defer guard(n.lg, "lookup", &errno)
	if _, ok, err := n.latest(); err != nil {
		return nil, fail(n.lg, "lookup", err)
	} else if !ok {
		return nil, syscall.ENOENT
	}
	ch := d.NewInode(ctx, n, gofs.StableAttr{Mode: syscall.S_IFREG})
	fillEntry(ctx, ch, out)
	volatile(out)
	return ch, 0
}

func (d *keyDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (_ *gofs.Inode, _ gofs.FileHandle, _ uint32, errno syscall.Errno) {
	n := d.node(name)
	defer guard(n.lg, "create", &errno)
	if d.p.fsys.ro {
		return nil, nil, 0, d.p.fsys.refuse(n.lg, "create")
	}
	ch := d.NewInode(ctx, n, gofs.StableAttr{Mode: syscall.S_IFREG})
	var a fuse.AttrOut
	n.fillAttr(&a, 0)
	out.Attr = a.Attr
	volatile(out)
	return ch, &keyHandle{n: n, writing: true}, fuse.FOPEN_DIRECT_IO, 0
}

func (d *keyDir) Unlink(ctx context.Context, name string) (errno syscall.Errno) {
	n := d.node(name)
	defer guard(n.lg, "unlink", &errno)
	if d.p.fsys.ro {
		return d.p.fsys.refuse(n.lg, "unlink")
	}
	if err := d.p.append([]record.Record{{Key: []byte(name)}}); err != nil {
		return fail(n.lg, "unlink", err)
	}
	return 0
}

// keyNode is @key/K.
type keyNode struct {
	gofs.Inode
	p   *part
	key string
	lg  *logrus.Entry
}

// latest returns the current value of the key with a newline, as `log`
// renders it.
func (n *keyNode) latest() ([]byte, bool, error) {
	kl := n.p.keyLookup()
	if kl == nil {
		return nil, false, nil
	}
	rec, ok, err := kl.Latest([]byte(n.key))
	if err != nil || !ok {
		return nil, false, err
	}
	if dec := n.p.schemas; dec.Decodes(&rec) {
		out, err := dec.Render(nil, position.Plain, &rec)
		return out, err == nil, err
	}
	return append(bytes.Clone(rec.Value), '\n'), true, nil
}

func (n *keyNode) fillAttr(out *fuse.AttrOut, size int) {
	out.Mode = syscall.S_IFREG | n.p.fsys.fileMode(true)
	out.Size = uint64(size)
	out.Nlink = 1
	setTimes(&out.Attr, n.p.fsys.opt.Now())
}

func (n *keyNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	defer guard(n.lg, "getattr", &errno)
	v, _, err := n.latest()
	if err != nil {
		return fail(n.lg, "getattr", err)
	}
	n.fillAttr(out, len(v))
	return 0
}

func (n *keyNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if n.p.fsys.ro {
		if _, ok := in.GetSize(); ok {
			return n.p.fsys.refuse(n.lg, "truncate")
		}
	}
	return n.Getattr(ctx, fh, out)
}

func (n *keyNode) Open(ctx context.Context, flags uint32) (_ gofs.FileHandle, _ uint32, errno syscall.Errno) {
	defer guard(n.lg, "open", &errno)
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		if n.p.fsys.ro {
			return nil, 0, n.p.fsys.refuse(n.lg, "open")
		}
		return &keyHandle{n: n, writing: true}, fuse.FOPEN_DIRECT_IO, 0
	}
	v, ok, err := n.latest()
	if err != nil {
		return nil, 0, fail(n.lg, "open", err)
	}
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	return &keyHandle{n: n, data: v}, fuse.FOPEN_DIRECT_IO, 0
}

// keyHandle reads the value seen at open, or collects what one open
// writes and appends it as one record at close.
type keyHandle struct {
	n       *keyNode
	writing bool
	data    []byte
	mu      sync.Mutex
	dirty   bool
	failed  error // a value that outgrew max.message.bytes: this open writes nothing more
	limit   int64 // max.message.bytes plus the newline, read at the first write (0 before)
}

func (h *keyHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.writing || off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(h.data[off:min(off+int64(len(dest)), int64(len(h.data)))]), 0
}

// Write collects the value. The write that makes it longer than
// max.message.bytes (plus the trailing newline) fails with EFBIG, drops
// what was collected, and so does every later write and the close.
func (h *keyHandle) Write(ctx context.Context, data []byte, off int64) (_ uint32, errno syscall.Errno) {
	defer guard(h.n.lg, "write", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed == nil {
		if h.limit == 0 {
			h.limit = int64(h.n.p.topicConf().MaxMessageBytes) + 1
		}
		if limit := h.limit; int64(len(h.data)+len(data)) > limit {
			h.failed = fmt.Errorf("value of @key/%s: more than max.message.bytes (%d): %w", h.n.key, limit-1, partlog.ErrTooLarge)
			h.data, h.dirty = nil, false
		}
	}
	if h.failed != nil {
		return 0, fail(h.n.lg, "write", h.failed)
	}
	h.data = append(h.data, data...)
	h.dirty = true
	return uint32(len(data)), 0
}

// Flush appends what was written since the last flush (close).
func (h *keyHandle) Flush(ctx context.Context) (errno syscall.Errno) {
	defer guard(h.n.lg, "flush", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.flushLocked(); err != nil {
		return fail(h.n.lg, "flush", err)
	}
	return 0
}

// REQUIRES: mu held.
func (h *keyHandle) flushLocked() error {
	if h.failed != nil {
		return h.failed
	}
	if !h.writing || !h.dirty {
		return nil
	}
	v := bytes.TrimSuffix(h.data, []byte{'\n'})
	h.data, h.dirty = nil, false
	if value, _, err := h.n.p.encodes(); err != nil {
		return err
	} else if value {
		if v, err = h.n.p.encodeValue(false, v); err != nil {
			return err
		}
	}
	return h.n.p.append([]record.Record{{Key: []byte(h.n.key), Value: v}})
}

// Fsync appends pending bytes as the record and makes the log durable.
func (h *keyHandle) Fsync(ctx context.Context, flags uint32) (errno syscall.Errno) {
	defer guard(h.n.lg, "fsync", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.flushLocked()
	if err == nil {
		err = h.n.p.log.Sync()
	}
	if err != nil {
		return fail(h.n.lg, "fsync", err)
	}
	return 0
}
