package fs

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/record"
)

// viewHandle is one open of a view. Reads continue exactly after the last
// record delivered when they come at the position where the previous read
// ended; other positions are located through the layout.
type viewHandle struct {
	n *viewNode

	mu      sync.Mutex
	size    int64  // REQUIRES: mu held; size seen at open or last stat
	limit   int64  // REQUIRES: mu held; end offset seen at open or last stat
	nextPos int64  // REQUIRES: mu held; file position of ahead[0]
	cur     cursor // REQUIRES: mu held; where the rendering after ahead continues
	// ahead is rendered but not yet delivered (a slice of aheadBuf);
	// fill is the size of the last rendering.
	ahead    []byte          // REQUIRES: mu held
	aheadBuf []byte          // REQUIRES: mu held
	fill     int             // REQUIRES: mu held
	spare    []byte          // REQUIRES: mu held; a buffer for the next prefetch
	pf       *prefetch       // REQUIRES: mu held; the running prefetch, if any
	buf      []byte          // REQUIRES: mu held; render scratch
	partial  []byte          // REQUIRES: mu held; written bytes not yet ended by \n
	recs     []record.Record // REQUIRES: mu held; reused record slice for appends
	// failed is the error of a line that failed before its end arrived
	// (the kernel splits writes larger than max_write, and the writer
	// retries the rest): every write until that line's newline fails
	// with it too, so no tail of a refused line is appended alone.
	failed error // REQUIRES: mu held
}

var (
	_ = (gofs.FileReader)((*viewHandle)(nil))
	_ = (gofs.FileWriter)((*viewHandle)(nil))
	_ = (gofs.FileFlusher)((*viewHandle)(nil))
	_ = (gofs.FileFsyncer)((*viewHandle)(nil))
	_ = (gofs.FileGetattrer)((*viewHandle)(nil))
	_ = (gofs.FileReleaser)((*viewHandle)(nil))
)

func (h *viewHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.n.Getattr(ctx, h, out)
}

// refresh takes up sizes seen by stat calls. REQUIRES: mu held.
func (h *viewHandle) refresh() {
	if h.n.rangeEnd >= 0 {
		return
	}
	size, limit := h.n.seenNow()
	h.size, h.limit = max(h.size, size), max(h.limit, limit)
}

func (h *viewHandle) Read(ctx context.Context, dest []byte, off int64) (_ fuse.ReadResult, errno syscall.Errno) {
	n := h.n
	lg := n.lg.WithField("pos", off)
	defer n.p.fsys.observe("read", time.Now(), &errno)
	defer guard(lg, "read", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refresh()
	if off != h.nextPos {
		h.dropPrefetch()
		h.ahead, h.fill = nil, 0
		if off >= h.size {
			return fuse.ReadResultData(nil), 0
		}
		cur, err := h.locate(off)
		if err != nil {
			return nil, fail(lg, "read", err)
		}
		h.cur, h.nextPos = cur, off
	}
	if len(h.ahead) == 0 {
		if err := h.fillAhead(len(dest)); err != nil {
			return nil, fail(lg.WithField("offset", h.cur.off), "read", err)
		}
	}
	cnt := copy(dest, h.ahead)
	h.ahead = h.ahead[cnt:]
	h.nextPos += int64(cnt)
	n.p.fsys.opt.Metrics.Read(n.p.log.Topic(), n.p.log.Partition(), cnt, 0)
	return replyData(dest[:cnt]), 0
}

// replyData is a read reply go-fuse writes with one writev. (A
// fuse.ReadResultData reply first goes through go-fuse's splice attempt:
// a pipe taken, grown and loaded with the header, then dropped, and
// replies over 1 MiB log "trySplice: ... max pipe size" each time.)
func replyData(b []byte) fuse.ReadResult {
	return fuse.ReadResultVector([][]byte{b})
}

// Read-ahead sizes: a sequential reader gets renderings of growing size
// (fewer backend reads per byte); a random read renders little.
const (
	minAhead = 64 << 10
	maxAhead = 1 << 20
)

// fillAhead renders the records from h.cur into the read-ahead buffer,
// taking the result of a prefetch when one is running. A reader whose
// renderings come back full gets the next one prefetched in the
// background, so rendering overlaps the kernel round trips.
// REQUIRES: mu held.
func (h *viewHandle) fillAhead(want int) error {
	if pf := h.takePrefetch(); pf != nil {
		if pf.cnt > 0 || pf.err != nil {
			h.spare, h.aheadBuf, h.ahead, h.cur = h.aheadBuf, pf.buf, pf.buf[:pf.cnt], pf.cur
			if pf.cnt == 0 {
				return pf.err
			}
			if pf.err != nil {
				h.n.lg.WithError(pf.err).Debug("prefetch stopped early; the error comes with the next read")
			} else if pf.cnt > len(pf.buf)/2 {
				h.startPrefetch(len(pf.buf))
			}
			return nil
		}
		h.spare = pf.buf
	}
	size := min(max(want, minAhead, 2*h.fill), maxAhead)
	if cap(h.aheadBuf) < size {
		h.aheadBuf = make([]byte, size)
	}
	cnt, buf, err := readStream(h.n.p.log, h.n.k, &h.cur, h.aheadBuf[:size], h.limit, h.buf)
	h.buf, h.ahead = buf, h.aheadBuf[:cnt]
	// Grow only while renderings come back full: a follower reading a
	// few new records at a time keeps a small buffer.
	h.fill = 0
	if cnt > size/2 {
		h.fill = size
		if err == nil && size == maxAhead {
			h.startPrefetch(size)
		}
	}
	if err != nil && cnt == 0 {
		return err
	}
	if err != nil {
		h.n.lg.WithError(err).Debug("read-ahead stopped early; the error comes with the next read")
	}
	return nil
}

// prefetch is a rendering running in the background for a handle.
type prefetch struct {
	done    chan struct{}
	buf     []byte
	scratch []byte
	cur     cursor
	cnt     int
	err     error
}

// startPrefetch renders the next size bytes after h.cur in a goroutine.
// REQUIRES: mu held, no prefetch running.
func (h *viewHandle) startPrefetch(size int) {
	buf := h.spare
	h.spare = nil
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	pf := &prefetch{done: make(chan struct{}), buf: buf[:size], cur: h.cur}
	l, k, limit := h.n.p.log, h.n.k, h.limit
	h.pf = pf
	go func() {
		defer close(pf.done)
		defer func() {
			if v := recover(); v != nil {
				pf.cnt, pf.err = 0, fmt.Errorf("prefetch panicked: %v", v)
			}
		}()
		pf.cnt, pf.scratch, pf.err = readStream(l, k, &pf.cur, pf.buf, limit, pf.scratch)
	}()
}

// takePrefetch waits for the running prefetch, if any, and detaches it.
// REQUIRES: mu held.
func (h *viewHandle) takePrefetch() *prefetch {
	pf := h.pf
	if pf == nil {
		return nil
	}
	<-pf.done
	h.pf = nil
	return pf
}

// dropPrefetch discards a running prefetch (the reader moved elsewhere).
// REQUIRES: mu held.
func (h *viewHandle) dropPrefetch() {
	if pf := h.takePrefetch(); pf != nil {
		h.spare = pf.buf
	}
}

// Release waits for a running prefetch so no goroutine outlives the handle.
func (h *viewHandle) Release(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropPrefetch()
	h.ahead, h.aheadBuf, h.spare = nil, nil, nil
	return 0
}

// locate finds the cursor of file position off. REQUIRES: mu held.
func (h *viewHandle) locate(off int64) (cursor, error) {
	ly := h.n.p.ly
	ly.mu.Lock()
	defer ly.mu.Unlock()
	release, err := ly.sync()
	defer release()
	if err != nil {
		return cursor{}, err
	}
	cur, err := ly.locate(h.n.k, h.n.startPos+off)
	if err != nil {
		return cursor{}, err
	}
	if cur.off < h.n.startOff {
		cur = cursor{off: h.n.startOff}
	}
	return cur, nil
}
