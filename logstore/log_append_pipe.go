package logstore

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// A large append of lines to an uncompressed topic is written while it is
// encoded: a goroutine writes the records at the end of the active segment
// as the encoder hands them over (record.LinePipe), every batch header
// still zero, so the write of one part overlaps the encoding of the next.
// Once the encoder is done, writeSpans counts the batches as for any
// append and writes only their headers, the first batch's last: a daemon
// killed before that leaves a batch of zeros where the append starts, and
// recovery, which keeps the batches up to the first invalid one, drops the
// append whole, as with writeRun's inverted CRC. Should the append have to
// roll the segment after all, what was written past the batches that stay
// in it is cut off before the roll, and the rest is written as usual.

// pipeMinBytes is the smallest append of lines that is written while
// encoded: below it, starting the writer costs more than it overlaps.
const pipeMinBytes = 256 << 10

// pipeStep is how many encoded bytes at least the writer is handed at once.
const pipeStep = 64 << 10

// linePipe writes an append's encoded records to f from pos as they come:
// its writer goroutine writes what the encoder handed it so far, and at
// the end the encoder writes the rest itself, so an append never waits
// for a writer that has not got a core.
type linePipe struct {
	record.LinePipe
	f    vfs.File
	path string
	pos  int64
	wake chan struct{} // new output; closed when the encoder is done

	mu       sync.Mutex
	idle     sync.Cond // inflight became false
	out      []byte    // the output so far
	claimed  int       // out[:claimed] is written or being written
	inflight bool      // the writer is reserving or writing
	closed   bool      // the encoder is done: the writer claims no more
	err      error     // the first failed write
	written  int       // bytes of out in f once finish returned
}

// startPipe starts a writer for an append of lines of total bytes at the
// end of the active segment, or returns nil when the append is too small,
// or the segment too close to full for it to fit (it would roll).
// REQUIRES: mu held.
func (l *Log) startPipe(total int) *linePipe {
	a := l.active()
	if total < pipeMinBytes || l.cfg.SegmentBytes-a.size < 2*int64(total) {
		return nil
	}
	p := &linePipe{f: a.log, path: a.path, pos: a.size, wake: make(chan struct{}, 1)}
	p.idle.L = &p.mu
	p.Step, p.Encoded = pipeStep, p.encoded
	// The writer reserves the append's blocks before its first write,
	// while the first records are encoded, rather than the encoder before
	// it starts: on tmpfs that is where the pages are allocated, about a
	// quarter of the append's time. It acts for the caller, who holds mu
	// until end has waited for it (inflight until the reservation is made).
	p.inflight = true
	go p.run(func() { l.reserve(a, total+total/8) })
	return p
}

// encoded takes the output out; when done, it writes what the writer has
// not claimed and waits for the writer's write in flight.
func (p *linePipe) encoded(out []byte, done bool) {
	p.mu.Lock()
	p.out = out
	p.mu.Unlock()
	if done {
		p.finish()
		return
	}
	select {
	case p.wake <- struct{}{}:
	default: // the writer has a wake-up waiting
	}
}

// finish ends the pipe: the rest of the output is written here, once the
// writer's write in flight is done, and the error of either returned. It
// may be called again.
func (p *linePipe) finish() error { return p.end(true) }

// stop ends the pipe of an encode that failed: the writer's write in
// flight is waited for, nothing more written.
func (p *linePipe) stop() { p.end(false) }

// end is finish, or stop unless rest.
func (p *linePipe) end(rest bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.err
	}
	p.closed = true
	close(p.wake)
	for p.inflight {
		p.idle.Wait()
	}
	if from := p.claimed; rest && p.err == nil && from < len(p.out) {
		p.claimed = len(p.out)
		p.err = p.write(p.out[from:], from)
	}
	p.written = p.claimed
	return p.err
}

// run calls reserve, then writes the output as it grows until the
// encoder is done.
func (p *linePipe) run(reserve func()) {
	reserve()
	p.mu.Lock()
	p.inflight = false
	p.idle.Broadcast()
	p.mu.Unlock()
	for range p.wake {
		for p.writeMore() {
		}
	}
}

// writeMore writes the output not yet claimed, if any and the pipe is
// still open, and reports whether it wrote.
func (p *linePipe) writeMore() bool {
	p.mu.Lock()
	if p.closed || p.err != nil || p.claimed >= len(p.out) {
		p.mu.Unlock()
		return false
	}
	out, from := p.out, p.claimed
	p.claimed, p.inflight = len(out), true
	p.mu.Unlock()
	err := p.write(out[from:], from)
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.inflight = false
	p.idle.Broadcast()
	p.mu.Unlock()
	return err == nil
}

// write writes b, the output from from, to the segment.
func (p *linePipe) write(b []byte, from int) error {
	if _, err := p.f.WriteAt(b, p.pos+int64(from)); err != nil {
		return fmt.Errorf("at %d: %w", p.pos+int64(from), err)
	}
	return nil
}

// reserve reserves blocks for an append of n bytes to a, logging a
// failure (the segment then stops trying). REQUIRES: mu held.
func (l *Log) reserve(a *segment, n int) {
	if err := a.reserve(n, l.cfg.SegmentBytes); err != nil {
		l.logger.WithError(err).WithField("segment", a.path).
			Warn("cannot reserve blocks ahead of appends; this segment is written without")
	}
}

// finishRun writes the run r to the active segment: whole, or when the
// pipe wrote its records (pipedLen bytes from r.pos), their headers, then
// cuts off what the pipe wrote past the run. REQUIRES: mu held.
func (l *Log) finishRun(r run, pipedLen int) error {
	a := l.active()
	if pipedLen == 0 {
		return a.writeRun(l.buf, r)
	}
	if err := a.writeHeaders(l.buf, r); err != nil {
		return err
	}
	if pipedLen > r.end-r.start { // the append rolls after this run
		a.allocEnd = 0 // the truncate releases reserved blocks too
		if err := a.log.Truncate(a.size); err != nil {
			return fmt.Errorf("cut %s back to %d before a roll: %w", a.path, a.size, err)
		}
	}
	return nil
}

// writeHeaders writes the header of each batch of the run r of buf, whose
// records are in the segment already: the first batch's last, so that
// until then the run starts with a batch of zeros. REQUIRES: Log.mu held.
func (s *segment) writeHeaders(buf []byte, r run) error {
	for at := r.firstEnd; at < r.end; at += batchSize(buf[at:]) {
		if err := s.writeHeader(buf, at, r); err != nil {
			return err
		}
	}
	if r.end == 0 {
		return nil
	}
	return s.writeHeader(buf, r.start, r)
}

// writeHeader writes the header of the batch at buf[at:] of the run r.
func (s *segment) writeHeader(buf []byte, at int, r run) error {
	pos := r.pos + int64(at-r.start)
	if _, err := s.log.WriteAt(buf[at:at+record.BatchHeaderSize], pos); err != nil {
		return fmt.Errorf("write %s at %d: %w", s.path, pos, err)
	}
	return nil
}

// batchSize is the size of the encoded batch starting b.
func batchSize(b []byte) int {
	return record.LogOverhead + int(binary.BigEndian.Uint32(b[8:]))
}
