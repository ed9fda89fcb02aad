package fs

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/partlog"
)

// chunk is one rendering of a view: the bytes a handle delivers, and where
// the rendering continues after them. Read replies are slices of it sent
// without a copy, so it is reference counted: one reference for the handle
// holding it, one per reply until go-fuse has written it (ReadResult.Done).
// The last reference returns the buffer to chunkBufs.
type chunk struct {
	buf  *[]byte // the whole buffer (maxAhead bytes), pooled
	data []byte  // rendered bytes not yet delivered
	cur  cursor  // where the rendering after this chunk continues
	err  error   // the error that ended a stream after data
	last bool    // the last chunk of a stream
	refs atomic.Int32
}

// chunkBufs holds rendering buffers of maxAhead bytes. A buffer whose reply
// go-fuse never completes (a reply it suppresses) is left to the GC.
var chunkBufs = sync.Pool{New: func() any {
	b := make([]byte, maxAhead)
	return &b
}}

// newChunk returns a chunk with an empty buffer and one reference.
func newChunk() *chunk {
	c := &chunk{buf: chunkBufs.Get().(*[]byte)}
	c.refs.Store(1)
	return c
}

// unref drops one reference; the last returns the buffer.
func (c *chunk) unref() {
	if c.refs.Add(-1) == 0 {
		chunkBufs.Put(c.buf)
		c.buf, c.data = nil, nil
	}
}

// reply delivers up to n bytes of c.data as a read reply and advances
// c.data past them.
func (c *chunk) reply(n int) (fuse.ReadResult, int) {
	n = min(n, len(c.data))
	b := c.data[:n:n]
	c.data = c.data[n:]
	c.refs.Add(1)
	return &chunkReply{c: c, vec: [][]byte{b}}, n
}

var _ fuse.ReadResult = (*chunkReply)(nil)

// chunkReply is a read reply that go-fuse writes with one writev straight
// from the chunk (go-fuse's writeWithSlice); Done releases the chunk. (A
// fuse.ReadResultData reply would first go through go-fuse's splice
// attempt: a pipe taken, grown and loaded, then dropped, logging
// "trySplice: ... max pipe size" for replies over 1 MiB.)
type chunkReply struct {
	c   *chunk
	vec [][]byte
}

func (r *chunkReply) Size() int { return len(r.vec[0]) }

// Bytes is go-fuse's fallback when it cannot write the slices itself.
func (r *chunkReply) Bytes(buf []byte) ([]byte, fuse.Status) {
	return append(buf[:0], r.vec[0]...), fuse.OK
}

// Slices makes go-fuse write the reply with writev, without a copy.
func (r *chunkReply) Slices() ([][]byte, fuse.Status) { return r.vec, fuse.OK }

// Done is called once the reply is written; a second call does nothing.
func (r *chunkReply) Done() {
	if c := r.c; c != nil {
		r.c, r.vec = nil, nil
		c.unref()
	}
}

// streamDepth is how many rendered chunks a stream keeps ready.
const streamDepth = 1

// stream renders a view in a goroutine of its own, chunk after chunk, from
// a cursor up to a limit, so rendering runs beside the kernel round trips
// of a sequential reader. One segment read spans all the chunks it
// fills: no batch is read, checked and decoded twice at a chunk boundary.
// The last chunk sent has last set (and the error, if one ended the
// stream); then the channel is closed.
type stream struct {
	chunks chan *chunk
	quit   chan struct{}
	done   chan struct{}
}

// startStream starts rendering the records of l from cur below limit.
func startStream(l partlog.Log, k kind, cur cursor, limit int64) *stream {
	s := &stream{chunks: make(chan *chunk, streamDepth), quit: make(chan struct{}), done: make(chan struct{})}
	go s.run(l, k, cur, limit)
	return s
}

func (s *stream) run(l partlog.Log, k kind, cur cursor, limit int64) {
	defer close(s.done)
	defer close(s.chunks)
	c := newChunk()
	o := renderOut{dst: *c.buf}
	o.flush = func(o *renderOut, at cursor) bool {
		c.data, c.cur = o.dst[:o.n], at
		if !s.send(c) {
			return false
		}
		c = newChunk()
		o.dst, o.n = *c.buf, 0
		return true
	}
	err := s.render(l, k, &cur, limit, &o)
	c.data, c.cur, c.err, c.last = o.dst[:o.n], cur, err, true
	s.send(c)
}

// render is readStream with a panic turned into an error.
func (s *stream) render(l partlog.Log, k kind, cur *cursor, limit int64, o *renderOut) (err error) {
	defer func() {
		if v := recover(); v != nil {
			// o.n and cur still agree: both move only after a
			// record is rendered whole.
			err = fmt.Errorf("read-ahead panicked: %v", v)
		}
	}()
	return readStream(l, k, cur, limit, o)
}

// send hands c to the reader; false (and c released) once the reader
// has stopped the stream.
func (s *stream) send(c *chunk) bool {
	select {
	case <-s.quit:
		c.unref()
		return false
	default:
	}
	select {
	case s.chunks <- c:
		return true
	case <-s.quit:
		c.unref()
		return false
	}
}

// next waits for the next chunk; nil after the last.
func (s *stream) next() *chunk { return <-s.chunks }

// stop ends the stream, releases the chunks it rendered and not
// delivered, and waits for its goroutine.
func (s *stream) stop() {
	close(s.quit)
	for c := range s.chunks {
		c.unref()
	}
	<-s.done
}
