package fs

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// viewHandle is one open of a view. Reads continue exactly after the last
// record delivered when they come at the position where the previous read
// ended; at other positions the layout gives the cursor (cursorAt).
type viewHandle struct {
	n *viewNode

	mu      sync.Mutex
	size    int64           // REQUIRES: mu held; size seen at open or last stat
	limit   int64           // REQUIRES: mu held; end offset seen at open or last stat
	nextPos int64           // REQUIRES: mu held; file position of ahead.data[0]
	cur     position.Cursor // REQUIRES: mu held; where the rendering after ahead continues
	// ahead holds rendered bytes not yet delivered (ahead.data), nil
	// when none; fill is the size of the last synchronous rendering.
	ahead   *chunk          // REQUIRES: mu held
	fill    int             // REQUIRES: mu held
	st      *stream         // REQUIRES: mu held; the running stream of a sequential reader, if any
	buf     []byte          // REQUIRES: mu held; render scratch
	partial []byte          // REQUIRES: mu held; written bytes not yet ended by \n
	recs    []record.Record // REQUIRES: mu held; reused record slice for appends
	// cached: this open reads through the kernel's page cache (viewCache)
	cached bool
	// failed is the error of a line that failed before its end arrived
	// (the kernel splits writes larger than max_write, and the writer
	// retries the rest): every write until that line's newline fails
	// with it too, so no tail of a refused line is appended alone.
	failed error // REQUIRES: mu held
	// unreported: failed came after earlier requests of its line were
	// answered with success, so the writer may have seen only a short
	// count; close reports it (REQUIRES: mu held)
	unreported bool
	// conf is the topic configuration a held partial line is checked
	// against, read once per open (nil until a partial line needs it).
	conf *config.Topic // REQUIRES: mu held
}

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

func (h *viewHandle) Read(ctx context.Context, dest []byte, off int64) (rr fuse.ReadResult, errno syscall.Errno) {
	n := h.n
	if h.cached {
		n.cache.readStarted(off)
		defer func() {
			end := int64(-1)
			if errno == 0 && rr.Size() < len(dest) {
				end = off + int64(rr.Size())
			}
			n.cache.readDone(end)
		}()
	}
	lg := n.lg.WithField("pos", off)
	defer n.p.fsys.observe("read", time.Now(), &errno)
	defer guard(lg, "read", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refresh()
	log, ly := n.p.in(ctx)
	if off != h.nextPos {
		h.dropAhead()
		if off >= h.size {
			return fuse.ReadResultData(nil), 0
		}
		cur, err := h.cursorAt(ly, off)
		if err != nil {
			return nil, fail(lg, "read", err)
		}
		h.cur, h.nextPos = cur, off
	}
	res := &chunkReply{}
	for res.size < len(dest) {
		if h.ahead == nil || len(h.ahead.data) == 0 {
			if err := h.fillAhead(log, len(dest)-res.size); err != nil {
				if h.cached {
					// The kernel takes a short read for the end of
					// the file: fail the request (its pages).
					res.Done()
					h.uncache()
					return nil, fail(lg.WithField("offset", h.cur.Off), "read", err)
				}
				if res.size > 0 {
					// deliver what came before; the error comes again
					// with the next read, which renders from h.cur
					lg.WithError(err).Debug("read stopped early; the error comes with the next read")
					break
				}
				return nil, fail(lg.WithField("offset", h.cur.Off), "read", err)
			}
		}
		if res.take(h.ahead, len(dest)-res.size) == 0 {
			break // the end of the file
		}
	}
	if h.cached && res.size > 0 && !n.gaplessIn(off, off+int64(res.size)) {
		// Retention or compaction removed records here: what was
		// rendered may have moved up to this position, where the kernel
		// would keep it. Fail rather than cache moved bytes.
		res.Done()
		h.uncache()
		return nil, fail(lg, "read", errRemoved)
	}
	h.nextPos += int64(res.size)
	n.p.fsys.opt.Metrics.Read(n.p.log.Topic(), n.p.log.Partition(), res.size, 0)
	if res.size == 0 {
		return fuse.ReadResultData(nil), 0
	}
	return res, 0
}

// Read-ahead sizes: a sequential reader gets renderings of growing size
// (fewer backend reads per byte); a random read renders little.
const (
	minAhead = 64 << 10
	maxAhead = 1 << 20
)

// fillAhead makes h.ahead the next rendering after h.cur: the next chunk
// of the running stream, or else a rendering done here. A reader whose
// renderings come back full gets a stream, so rendering overlaps the
// kernel round trips. REQUIRES: mu held.
func (h *viewHandle) fillAhead(log partlog.Log, want int) error {
	if h.st != nil {
		h.releaseAhead()
		c := h.st.next()
		if c != nil && !c.last {
			h.ahead, h.cur = c, c.cur
			return nil
		}
		h.st.stop()
		h.st = nil
		if c != nil {
			h.cur = c.cur
			if len(c.data) > 0 || c.err != nil {
				h.ahead = c
				return h.streamEnd(c.err)
			}
			// the stream reached its limit at a chunk boundary: the
			// limit may have grown since it started
			c.unref()
		}
	}
	size := min(max(want, minAhead, 2*h.fill), maxAhead)
	c := h.reuseAhead(size)
	o := position.RenderOut{Dec: h.n.p.ly.Decoder(), Dst: (*c.buf)[:size], Buf: h.buf}
	from := h.cur.Off
	err := position.ReadStream(log, h.n.k, &h.cur, h.limit, &o)
	h.buf, c.data, h.ahead = o.Buf, o.Dst[:o.N], c
	// Grow only while renderings come back full: a follower reading a
	// few new records at a time keeps a small buffer. A reader that came
	// back for a second full maxAhead gets a stream (`head` does not).
	again := h.fill == maxAhead
	h.fill = 0
	if o.N > size/2 {
		h.fill = size
		if err == nil && size == maxAhead && again {
			h.st = startStream(h.n.p.log, h.n.p.ly.Decoder(), h.n.k, h.cur, h.limit, h.cur.Off-from)
		}
	}
	return h.streamEnd(err)
}

// streamEnd returns err when no data came before it; otherwise the data
// is delivered and the error comes again with the read after it.
// REQUIRES: mu held, h.ahead set.
func (h *viewHandle) streamEnd(err error) error {
	if err != nil && len(h.ahead.data) == 0 {
		return err
	}
	if err != nil {
		h.n.lg.WithError(err).Debug("read-ahead stopped early; the error comes with the next read")
	}
	return nil
}

// reuseAhead returns h.ahead for a new rendering of size bytes when no
// reply holds it any more and it is large enough (random readers render
// into one buffer), or else a new chunk. REQUIRES: mu held.
func (h *viewHandle) reuseAhead(size int) *chunk {
	// Replies take references only under mu: one reference means none.
	if c := h.ahead; c != nil && c.refs.Load() == 1 && cap(*c.buf) >= size {
		h.ahead = nil
		return c
	}
	h.releaseAhead()
	return newChunk(size)
}

// releaseAhead lets go of the current chunk (replies in flight keep it).
// REQUIRES: mu held.
func (h *viewHandle) releaseAhead() {
	if h.ahead != nil {
		h.ahead.unref()
		h.ahead = nil
	}
}

// dropAhead discards everything rendered ahead (the reader moved
// elsewhere or closed), stopping a running stream. REQUIRES: mu held.
func (h *viewHandle) dropAhead() {
	if h.st != nil {
		h.st.stop()
		h.st = nil
	}
	h.releaseAhead()
	h.fill = 0
}

// Release stops a running stream so no goroutine outlives the handle.
func (h *viewHandle) Release(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropAhead()
	if h.cached {
		h.n.cache.closed()
	}
	return 0
}

// cursorAt finds the cursor of file position off. REQUIRES: mu held.
func (h *viewHandle) cursorAt(ly *position.Layout, off int64) (position.Cursor, error) {
	cur, err := ly.Place(h.n.k, h.n.startPos+off)
	if err != nil {
		return position.Cursor{}, err
	}
	if cur.Off < h.n.startOff {
		cur = position.Cursor{Off: h.n.startOff}
	}
	return cur, nil
}
