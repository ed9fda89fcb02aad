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
	if err := checkBatchesOptions(&opt); err != nil {
		return dst, ends, 0, err
	}
	start, nends := len(dst), len(ends)
	ts := TimestampOf(&Record{}, opt.DefaultTimestampMs)
	lines := lineReader{chunks: chunks}
	total := 0
	for lines.peek() != nil {
		at := len(dst)
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
		writeHeader(dst[at:], baseOffset+int64(total), n, int32(n-1), ts, opt.maxTimestamp(ts), &opt)
		ends = append(ends, len(dst))
		total += n
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
	}
}

// lineReader reads the Lines of chunks one at a time, for the encoder,
// which may leave a line for the next batch (Lines itself cannot: a pulled
// iterator costs a coroutine switch per line).
type lineReader struct {
	chunks [][]byte
	rest   []byte // of the current chunk, after line
	line   []byte // the line peek returns; nil once consumed
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
