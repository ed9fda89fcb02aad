package fs

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog"
)

// chunk is one rendering of a view: the bytes a handle delivers, and where
// the rendering continues after them. Read replies are slices of it sent
// without a copy, so it is reference counted: one reference for the handle
// holding it, one per reply until go-fuse has written it (ReadResult.Done).
// The last reference returns the buffer to chunkBufs.
type chunk struct {
	buf  *[]byte         // the whole buffer (maxAhead bytes), pooled
	data []byte          // rendered bytes not yet delivered
	cur  position.Cursor // where the rendering after this chunk continues
	err  error           // the error that ended a stream after data
	last bool            // the last chunk of a stream
	// rangeEnd marks the last chunk of a stream's range of offsets
	rangeEnd bool
	refs     atomic.Int32
}

// chunkBufs holds rendering buffers of maxAhead bytes, the size of every
// chunk of a stream, and firstBufs those of firstRender bytes, one per
// window lookup. A buffer whose reply go-fuse never completes (a reply it
// suppresses) is left to the GC.
var chunkBufs, firstBufs = bufPool(maxAhead), bufPool(firstRender)

func bufPool(size int) *sync.Pool {
	return &sync.Pool{New: func() any {
		b := make([]byte, size)
		return &b
	}}
}

// pooled returns the pool of buffers of size bytes, if there is one.
func pooled(size int) *sync.Pool {
	switch size {
	case maxAhead:
		return chunkBufs
	case firstRender:
		return firstBufs
	}
	return nil
}

// newChunk returns a chunk with an empty buffer of size bytes and one
// reference.
func newChunk(size int) *chunk {
	var b *[]byte
	if p := pooled(size); p != nil {
		b = p.Get().(*[]byte)
	} else {
		s := make([]byte, size)
		b = &s
	}
	c := &chunk{buf: b}
	c.refs.Store(1)
	return c
}

// unref drops one reference; the last returns a pooled buffer.
func (c *chunk) unref() {
	if c.refs.Add(-1) == 0 {
		if p := pooled(cap(*c.buf)); p != nil {
			p.Put(c.buf)
		}
		c.buf, c.data = nil, nil
	}
}

// reply delivers up to n bytes of c.data as a read reply and advances
// c.data past them.
func (c *chunk) reply(n int) (fuse.ReadResult, int) {
	r := &chunkReply{}
	return r, r.take(c, n)
}

var _ fuse.ReadResult = (*chunkReply)(nil)

// chunkReply is a read reply that go-fuse writes with one writev straight
// from the chunks (go-fuse's writeWithSlice); Done releases them. One
// reply may span several chunks: a read is filled until its end or the
// end of the file. (A fuse.ReadResultData reply would first go through
// go-fuse's splice attempt: a pipe taken, grown and loaded, then dropped,
// logging "trySplice: ... max pipe size" for replies over 1 MiB.)
type chunkReply struct {
	cs   []*chunk
	vec  [][]byte
	size int
}

// take adds up to n bytes of c.data to the reply, advancing c.data past
// them, and returns how many it took.
func (r *chunkReply) take(c *chunk, n int) int {
	n = min(n, len(c.data))
	if n == 0 {
		return 0
	}
	r.vec = append(r.vec, c.data[:n:n])
	c.data = c.data[n:]
	c.refs.Add(1)
	r.cs = append(r.cs, c)
	r.size += n
	return n
}

func (r *chunkReply) Size() int { return r.size }

// Bytes is go-fuse's fallback when it cannot write the slices itself.
func (r *chunkReply) Bytes(buf []byte) ([]byte, fuse.Status) {
	buf = buf[:0]
	for _, b := range r.vec {
		buf = append(buf, b...)
	}
	return buf, fuse.OK
}

// Slices makes go-fuse write the reply with writev, without a copy.
func (r *chunkReply) Slices() ([][]byte, fuse.Status) { return r.vec, fuse.OK }

// Done is called once the reply is written; a second call does nothing.
func (r *chunkReply) Done() {
	cs := r.cs
	r.cs, r.vec = nil, nil
	for _, c := range cs {
		c.unref()
	}
}

// Rendering is split between streamLanes goroutines by ranges of
// offsets: range i is rendered by lane i%streamLanes into a queue of its
// own, and the reader takes the ranges' chunks in order, so one lane
// renders while the other's chunks are delivered. A range starts a
// segment read of its own (the batch at its start is read again), so it
// spans rangeChunks chunks of output, as estimated from the rendering
// before the stream; a lane's queue holds a whole range.
const (
	streamLanes = 2
	rangeChunks = 4
)

// stream renders a view in goroutines of its own, chunk after chunk, from
// a cursor up to a limit, so rendering runs beside the kernel round trips
// of a sequential reader. Within a range, one segment read spans all the
// chunks it fills: no batch is read, checked and decoded twice at a chunk
// boundary. The last chunk delivered has last set (and the error, if one
// ended the stream).
type stream struct {
	lanes []chan *chunk
	at    int // the lane whose range the reader takes now
	quit  chan struct{}
	wg    sync.WaitGroup
}

// startStream starts rendering the records of l from cur below limit;
// perChunk is about how many records fill a chunk.
func startStream(l partlog.Log, dec position.Decoder, k position.Kind, cur position.Cursor, limit, perChunk int64) *stream {
	s := &stream{quit: make(chan struct{})}
	span := max(perChunk, 1) * rangeChunks
	for j := range streamLanes {
		ch := make(chan *chunk, rangeChunks+1)
		s.lanes = append(s.lanes, ch)
		s.wg.Add(1)
		go s.lane(ch, j, l, dec, k, cur, limit, span)
	}
	return s
}

// lane renders ranges j, j+streamLanes, ... of span offsets each from
// first (range 0 from first itself, which may be inside a record).
func (s *stream) lane(ch chan *chunk, j int, l partlog.Log, dec position.Decoder, k position.Kind, first position.Cursor, limit, span int64) {
	defer s.wg.Done()
	defer close(ch)
	for i := int64(j); ; i += streamLanes {
		cur := position.Cursor{Off: first.Off + i*span}
		if i == 0 {
			cur = first
		} else if cur.Off >= limit {
			return
		}
		end := min(cur.Off+span, limit)
		if !s.renderRange(ch, l, dec, k, cur, end, end == limit) {
			return
		}
	}
}

// renderRange renders [cur, end) into chunks sent to ch; its final chunk
// has rangeEnd set, and last when the range ends the stream (or failed).
// It returns false when the lane is done.
func (s *stream) renderRange(ch chan *chunk, l partlog.Log, dec position.Decoder, k position.Kind, cur position.Cursor, end int64, final bool) bool {
	c := newChunk(maxAhead)
	o := position.RenderOut{Dec: dec, Dst: *c.buf}
	o.Flush = func(o *position.RenderOut, at position.Cursor) bool {
		c.data, c.cur = o.Dst[:o.N], at
		if !s.send(ch, c) {
			return false
		}
		c = newChunk(maxAhead)
		o.Dst, o.N = *c.buf, 0
		return true
	}
	err := s.render(l, k, &cur, end, &o)
	c.data, c.cur, c.err, c.rangeEnd = o.Dst[:o.N], cur, err, true
	c.last = final || err != nil
	return s.send(ch, c) && !c.last
}

// render is readStream with a panic turned into an error.
func (s *stream) render(l partlog.Log, k position.Kind, cur *position.Cursor, limit int64, o *position.RenderOut) (err error) {
	defer func() {
		if v := recover(); v != nil {
			// o.n and cur still agree: both move only after a
			// record is rendered whole.
			err = fmt.Errorf("read-ahead panicked: %v", v)
		}
	}()
	return position.ReadStream(l, k, cur, limit, o)
}

// send hands c to the reader; false (and c released) once the reader
// has stopped the stream.
func (s *stream) send(ch chan *chunk, c *chunk) bool {
	select {
	case <-s.quit:
		c.unref()
		return false
	default:
	}
	select {
	case ch <- c:
		return true
	case <-s.quit:
		c.unref()
		return false
	}
}

// next waits for the next chunk with data, or the last one; nil if the
// stream ended without one (it does not).
func (s *stream) next() *chunk {
	for {
		c, ok := <-s.lanes[s.at]
		if !ok {
			return nil
		}
		if c.rangeEnd && !c.last {
			s.at = (s.at + 1) % len(s.lanes)
		}
		if len(c.data) > 0 || c.last {
			return c
		}
		c.unref() // an empty range (tombstones, or records gone)
	}
}

// stop ends the stream, releases the chunks it rendered and not
// delivered, and waits for its goroutines.
func (s *stream) stop() {
	close(s.quit)
	for _, ch := range s.lanes {
		for c := range ch {
			c.unref()
		}
	}
	s.wg.Wait()
}
