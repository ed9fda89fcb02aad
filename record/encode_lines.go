package record

import (
	"bytes"
	"iter"
	"math"
	"slices"
)

// Text written line by line (a `cat` into a log) becomes one record per
// line. Encoding the lines where they lie saves building a Record for each
// and reading it back.

// AppendLineRecords appends to recs a record for each of the Lines of
// chunks: no key, headers or timestamp, the line as value (aliasing the
// chunk, never nil).
func AppendLineRecords(recs []Record, chunks ...[]byte) []Record {
	for line := range Lines(chunks...) {
		// Zeroed in place, then one field set: a composite literal would
		// be built on the stack and copied, a third slower for short lines.
		recs = append(recs, Record{})
		recs[len(recs)-1].Value = line
	}
	return recs
}

// Lines yields the '\n'-terminated lines of each chunk in turn, without
// their '\n' (never nil, capacity ending at the line); bytes after a
// chunk's last '\n' are left out. Every append of text line by line splits
// it so.
func Lines(chunks ...[]byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for _, data := range chunks {
			for i := bytes.IndexByte(data, '\n'); i >= 0; i = bytes.IndexByte(data, '\n') {
				if !yield(data[:i:i]) {
					return
				}
				data = data[i+1:]
			}
		}
	}
}

// AppendLineBatches is AppendBatches of the records AppendLineRecords
// makes of chunks, byte for byte, without making them. It also returns how
// many records it wrote.
func (e *Encoder) AppendLineBatches(dst []byte, baseOffset int64, chunks [][]byte, opt BatchOptions, limit int, ends []int) ([]byte, []int, int, error) {
	return e.AppendLineBatchesPiped(dst, baseOffset, chunks, opt, limit, ends, nil)
}

// A LinePipe follows an encode of lines as it goes (AppendLineBatchesPiped).
type LinePipe struct {
	// Step is how many bytes at least are encoded between calls of Encoded.
	Step int
	// Encoded is called with the output so far (from dst's start), every
	// Step bytes and once more at the end with done set. Its bytes do not
	// change after the call except the batches' headers, which stay zero
	// until the call with done returns; they are written then.
	Encoded func(out []byte, done bool)
}

// AppendLineBatchesPiped is AppendLineBatches that hands its output to
// pipe (if not nil) while it encodes, so the caller can write the records
// before their headers. On error pipe is not called with done.
func (e *Encoder) AppendLineBatchesPiped(dst []byte, baseOffset int64, chunks [][]byte, opt BatchOptions, limit int, ends []int, pipe *LinePipe) ([]byte, []int, int, error) {
	if err := checkBatchesOptions(&opt); err != nil {
		return dst, ends, 0, err
	}
	start, nends := len(dst), len(ends)
	ts := TimestampOf(&Record{}, opt.DefaultTimestampMs)
	lines := lineReader{chunks: chunks, pipeAt: math.MaxInt}
	if pipe != nil {
		lines.pipe, lines.pipeFrom, lines.pipeAt = pipe, start, start+pipe.Step
	}
	counts := e.lineCounts[:0]
	for at := len(dst); lines.peek() != nil; at = len(dst) {
		dst = append(dst, make([]byte, BatchHeaderSize)...)
		var n int
		var err error
		dst, n, err = appendLinesUpTo(dst, &lines, at+limit)
		if err == nil && (n-1 > math.MaxInt32 || len(dst)-at-LogOverhead > math.MaxInt32) {
			err = errTooLarge
		}
		if err != nil {
			return dst[:start], ends[:nends], 0, err
		}
		ends, counts = append(ends, len(dst)), append(counts, n)
	}
	e.lineCounts = counts[:0]
	if pipe != nil {
		pipe.Encoded(dst[start:], true)
	}
	// the headers, now that the records are final
	total, at := 0, start
	for i, n := range counts {
		end := ends[nends+i]
		writeHeader(dst[at:end], baseOffset+int64(total), n, int32(n-1), ts, opt.maxTimestamp(ts), &opt)
		total, at = total+n, end
	}
	return dst, ends, total, nil
}

// appendLinesUpTo is appendRecordsUpTo for the next lines: records with
// equal timestamps (delta 0) and the lines as values. Its record step is
// appendRecordsUpTo's, written out again rather than moved into a helper
// both call: Go does not inline that helper, which would add a call per
// record.
func appendLinesUpTo(b []byte, lines *lineReader, limit int) ([]byte, int, error) {
	for i := 0; ; i++ {
		line := lines.peek()
		if line == nil {
			return b, i, nil
		}
		mark := len(b)
		b = slices.Grow(b, keylessMaxHead+len(line))
		if n := putKeyless(b[len(b):cap(b)], 0, int64(i), line); n > 0 {
			b = b[:len(b)+n]
		} else {
			var err error
			if b, err = appendRecord(b, &Record{Value: line}, 0, int64(i)); err != nil {
				return b[:mark], i, err
			}
		}
		if len(b) > limit && i > 0 {
			return b[:mark], i, nil
		}
		lines.next()
		if len(b) >= lines.pipeAt {
			lines.piped(b)
		}
	}
}

// lineReader reads the Lines of chunks one at a time, for the encoder,
// which may leave a line for the next batch (Lines itself cannot: a pulled
// iterator costs a coroutine switch per line).
type lineReader struct {
	chunks [][]byte
	rest   []byte // of the current chunk, after line
	line   []byte // the line peek returns; nil once consumed

	pipe     *LinePipe // if not nil, told of the output every Step bytes
	pipeFrom int       // where the output pipe is told of starts
	pipeAt   int       // the output length at which to tell it next
}

// piped tells the pipe of the output b.
func (r *lineReader) piped(b []byte) {
	r.pipe.Encoded(b[r.pipeFrom:], false)
	r.pipeAt = len(b) + r.pipe.Step
}

// peek returns the next line without its '\n' (never nil), or nil at the end.
func (r *lineReader) peek() []byte {
	for r.line == nil {
		if i := bytes.IndexByte(r.rest, '\n'); i >= 0 {
			r.line, r.rest = r.rest[:i:i], r.rest[i+1:]
		} else if len(r.chunks) > 0 {
			r.rest, r.chunks = r.chunks[0], r.chunks[1:]
		} else {
			return nil
		}
	}
	return r.line
}

// next consumes the line peek returned.
func (r *lineReader) next() { r.line = nil }
