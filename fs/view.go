package fs

import (
	"context"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog"
)

// viewNode is a rendered stream: `log`/`log.jsonl` (writable, from
// position 0) or a window @offset/N, @time/T (read-only, from the position
// of its first record), possibly a fixed range.
type viewNode struct {
	gofs.Inode
	p        *part
	k        position.Kind
	lg       *logrus.Entry
	writable bool

	startOff int64 // first offset of a window (log: the log start at open)
	startPos int64 // stream position of file position 0
	rangeEnd int64 // exclusive end offset of a range file; -1 if growing
	rangeLen int64 // exact size of a range file

	mu        sync.Mutex
	seenLimit int64       // end offset as of the last Getattr
	seenSize  int64       // size as of the last Getattr
	first     *firstChunk // REQUIRES: mu held; the lookup's rendering, until an open takes it

	cache viewCache // what the kernel may keep of log and log.jsonl
}

func newLogNode(p *part, name string, k position.Kind) *viewNode {
	n := &viewNode{p: p, k: k, lg: p.lg.WithField("file", name), writable: true, rangeEnd: -1}
	// Only a mount nothing writes through caches: a write through the
	// kernel moves its st_size itself (viewCache).
	n.cache.off = p.fsys.noPageCache || !p.fsys.ro
	return n
}

// size returns the file size and the end offset it corresponds to.
func (n *viewNode) size(ly *position.Layout) (size, limit int64, err error) {
	if n.rangeEnd >= 0 {
		return n.rangeLen, n.rangeEnd, nil
	}
	err = ly.WithSync(func() error {
		end, err := ly.End(n.k)
		size, limit = max(end-n.startPos, 0), ly.LastNext()
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return size, limit, nil
}

// openSize is the size and end offset an open reads up to: for a window,
// those the kernel was last told (seen: by the lookup, whose attributes the
// kernel may answer the open's checks and an fstat with, or by a getattr
// since), so that a read returns what fstat says; for log and log.jsonl,
// their size now.
func (n *viewNode) openSize(ly *position.Layout) (size, limit int64, err error) {
	if !n.writable {
		if size, limit := n.seenNow(); limit > 0 {
			return size, limit, nil
		}
	}
	return n.size(ly)
}

// seen records a size observed by a stat, so open handles read up to it.
func (n *viewNode) seen(size, limit int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seenSize = max(n.seenSize, size)
	n.seenLimit = max(n.seenLimit, limit)
}

func (n *viewNode) seenNow() (size, limit int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seenSize, n.seenLimit
}

func (n *viewNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	defer n.p.fsys.observe("getattr", time.Now(), &errno)
	defer guard(n.lg, "getattr", &errno)
	log, ly := n.p.in(ctx)
	size, limit, err := n.size(ly)
	if err != nil {
		return fail(n.lg, "getattr", err)
	}
	n.seen(size, limit)
	n.cache.grown(n.EmbeddedInode(), size)
	n.fillAttr(out, size, log)
	return 0
}

// ioBlock is the st_blksize of log and log.jsonl: tools such as cat size
// their reads and writes by it, so one FUSE request carries up to
// max_read/max_write (1 MiB) instead of 128 KiB (8x fewer round trips,
// batches of up to 1 MiB).
const ioBlock = 1 << 20

// smallBlksize is the st_blksize of the other files (stat, config,
// .metrics, segments/). Every file but those of segments/ reports no
// blocks: it is rendered, not stored, so du counts only segments/.
const smallBlksize = 4096

func (n *viewNode) fillAttr(out *fuse.AttrOut, size int64, log partlog.Log) {
	out.Mode = syscall.S_IFREG | n.p.fsys.fileMode(n.writable)
	out.Size = uint64(size)
	out.Nlink = 1
	out.Blksize = ioBlock
	if !n.writable {
		// What the lookup rendered: a reader that sizes its buffer by
		// st_blksize (stdio, Python) reads its first line from it.
		out.Blksize = firstRender
	}
	t := n.p.fsys.start
	if snap, release := log.Segments(); len(snap) > 0 {
		if ts := snap[len(snap)-1].MaxTimestamp; ts > 0 {
			t = time.UnixMilli(ts)
		}
		release()
	} else {
		release()
	}
	setTimes(&out.Attr, t)
}

// Setattr refuses every change, like a Linux append-only file (docs/spec.md §4):
// truncation, chmod, chown and explicit times fail with EPERM. `touch` of
// log or log.jsonl (both times "now") succeeds and changes nothing, as on
// a `chattr +a` file; its times are those of the latest record.
func (n *viewNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) (errno syscall.Errno) {
	defer guard(n.lg, "setattr", &errno)
	const now = fuse.FATTR_ATIME | fuse.FATTR_MTIME | fuse.FATTR_ATIME_NOW | fuse.FATTR_MTIME_NOW
	changes := in.Valid &^ (fuse.FATTR_FH | fuse.FATTR_LOCKOWNER | fuse.FATTR_CTIME)
	if changes == 0 || (n.writable && !n.p.fsys.ro && changes&^now == 0 && changes&now == now) {
		return n.Getattr(ctx, fh, out)
	}
	if _, ok := in.GetSize(); ok {
		return n.p.fsys.refuse(n.lg, "truncate")
	}
	return n.p.fsys.refuse(n.lg, "setattr")
}

func (n *viewNode) Open(ctx context.Context, flags uint32) (_ gofs.FileHandle, _ uint32, errno syscall.Errno) {
	defer n.p.fsys.observe("open", time.Now(), &errno)
	defer guard(n.lg, "open", &errno)
	writing := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	if writing || flags&syscall.O_TRUNC != 0 {
		if n.p.fsys.ro {
			return nil, 0, n.p.fsys.refuse(n.lg, "open")
		}
		switch {
		case !n.writable:
			return nil, 0, n.p.fsys.refuse(n.lg, "open")
		case flags&syscall.O_TRUNC != 0:
			return nil, 0, n.p.fsys.refuse(n.lg, "truncate")
		case flags&syscall.O_APPEND == 0: // append-only, like chattr +a
			return nil, 0, n.p.fsys.refuse(n.lg, "open for writing without O_APPEND")
		}
	}
	var size, limit int64
	log, ly := n.p.in(ctx)
	if flags&syscall.O_ACCMODE != syscall.O_WRONLY {
		var err error
		if r, ok := log.(partlog.Refresher); ok && n.writable {
			if err := r.Refresh(); err != nil {
				return nil, 0, fail(n.lg, "open", err)
			}
		}
		if size, limit, err = n.openSize(ly); err != nil {
			return nil, 0, fail(n.lg, "open", err)
		}
	}
	start := n.startOff
	if n.writable {
		start = log.StartOffset()
	}
	h := &viewHandle{n: n, size: size, limit: limit, cur: position.Cursor{Off: start}}
	if c := n.takeFirst(limit); c != nil {
		h.ahead, h.cur = c, c.cur
	}
	fl := uint32(fuse.FOPEN_DIRECT_IO) // a window
	if n.writable {
		candidate := !writing && flags&syscall.O_TRUNC == 0
		var drop bool
		fl, h.cached, drop = n.cache.openFlags(candidate, n.gapless)
		if drop {
			n.NotifyContent(0, 0)
		}
	}
	if !writing {
		// nothing to flush at close: the kernel then sends no FLUSH
		fl |= fuse.FOPEN_NOFLUSH
	}
	return h, fl, 0
}
