package fs

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// cursor is where a reader continues: skip bytes into the rendering of the
// first record with offset >= off.
type cursor struct {
	off  int64
	skip int
}

func kindLen(k kind, r *record.Record) int64 {
	if k == plainKind {
		return plainLen(r)
	}
	return jsonLen(r) + 1
}

// lens returns the lengths of r's plain and JSON renderings.
func (ly *layout) lens(r *record.Record) (plain, json int64, err error) {
	if ly.dec.decodes(r) {
		return ly.dec.lens(r)
	}
	return plainLen(r), jsonLen(r) + 1, nil
}

// kindLen is kindLen of ly's renderings.
func (ly *layout) kindLen(k kind, r *record.Record) (int64, error) {
	if !ly.dec.decodes(r) {
		return kindLen(k, r), nil
	}
	plain, json, err := ly.dec.lens(r)
	if k == plainKind {
		return plain, err
	}
	return json, err
}

// posOf returns the stream position of record off (or of the next
// surviving record when off was removed). REQUIRES: mu held, after sync.
func (ly *layout) posOf(k kind, off int64) (int64, error) {
	return ly.posRendering(k, off, nil)
}

// posRendering is posOf that, when w is set and finding the position reads
// the segment holding off, goes on in that same read rendering the records
// from off on into w (the first read of a window comes from its lookup's
// read; no batch is read twice). w.seg is then the segment rendered from;
// w renders nothing when the position needed no read. REQUIRES: mu held,
// after sync.
func (ly *layout) posRendering(k kind, off int64, w *renderer) (int64, error) {
	i := ly.find(off)
	s := ly.segs[i]
	switch {
	case off <= s.base:
		return s.start[k], nil
	case off >= s.snap.Next:
		if i+1 < len(ly.segs) {
			return ly.segs[i+1].start[k], nil
		}
		return ly.end(k)
	case s.next <= off:
		before, err := ly.scanRendering(s, off, w)
		if err != nil {
			return 0, err
		}
		return s.start[k] + before[k], nil
	}
	ck := s.ckptBefore(func(c ckpt) bool { return c.off > off })
	pos := ck.pos[k]
	var lerr error
	err := ly.log.Read(s.snap, ck.off, func(r *record.Record) bool {
		if r.Offset >= off {
			return w.at(s.snap, r)
		}
		var n int64
		n, lerr = ly.kindLen(k, r)
		pos += n
		return lerr == nil
	})
	if err = cmp.Or(err, lerr, w.failed()); err != nil {
		return 0, ly.readErr(s, ck.off, err)
	}
	w.segmentDone(s.snap)
	return s.start[k] + pos, nil
}

// ckptBefore returns the last checkpoint before the first one for which
// after is true, or the segment start.
func (s *segInfo) ckptBefore(after func(ckpt) bool) ckpt {
	j := sort.Search(len(s.ckpts), func(j int) bool { return after(s.ckpts[j]) })
	if j == 0 {
		return ckpt{off: s.base}
	}
	return s.ckpts[j-1]
}

func (ly *layout) readErr(s *segInfo, from int64, err error) error {
	return fmt.Errorf("read segment %d of %s-%d from offset %d: %w",
		s.base, ly.log.Topic(), ly.log.Partition(), from, err)
}

// locate returns the cursor of stream position pos: the record covering it
// and how far into that record, or the next record after a gap.
// REQUIRES: mu held, after sync.
func (ly *layout) locate(k kind, pos int64) (cursor, error) {
	i := ly.findPos(k, pos)
	s := ly.segs[i]
	if pos < s.start[k] {
		return cursor{off: s.base}, nil
	}
	rel := pos - s.start[k]
	if rel >= s.length[k] {
		if err := ly.scan(s, s.snap.Next); err != nil {
			return cursor{}, err
		}
	}
	if rel >= s.length[k] {
		if i+1 < len(ly.segs) {
			return cursor{off: ly.segs[i+1].base}, nil
		}
		return cursor{off: s.snap.Next}, nil
	}
	ck := s.ckptBefore(func(c ckpt) bool { return c.pos[k] > rel })
	at, cur, found := ck.pos[k], cursor{off: s.next}, false
	var lerr error
	err := ly.log.Read(s.snap, ck.off, func(r *record.Record) bool {
		var n int64
		if n, lerr = ly.kindLen(k, r); lerr != nil {
			return false
		}
		if at+n > rel {
			cur, found = cursor{off: r.Offset, skip: int(rel - at)}, true
			return false
		}
		at += n
		return true
	})
	if err = cmp.Or(err, lerr); err != nil {
		return cursor{}, ly.readErr(s, ck.off, err)
	}
	if !found && i+1 < len(ly.segs) {
		cur = cursor{off: ly.segs[i+1].base}
	}
	return cur, nil
}

// renderOut is where readStream renders: dst[:n] is filled. When dst is
// full, flush (if set) hands it over and installs an empty dst, or returns
// false to end the rendering; without flush the rendering ends when dst is
// full. buf is render scratch.
type renderOut struct {
	dec   *decoder // schema-encoded payloads decoded; nil: none
	dst   []byte
	n     int
	buf   []byte
	flush func(o *renderOut, cur cursor) bool
}

// readStream renders records from cur into o, for records with offsets
// below limit, and advances cur. It fills o.dst with whole records, and
// splits a record only when it alone does not fit (or cur starts inside
// it). A flush continues the same segment read (no batch is read twice
// for consecutive buffers). It never reads the layout.
func readStream(l partlog.Log, k kind, cur *cursor, limit int64, o *renderOut) error {
	snap, release := l.Segments()
	defer release()
	i := sort.Search(len(snap), func(i int) bool { return snap[i].Base > cur.off })
	w := renderer{k: k, cur: cur, limit: limit, o: o}
	for i = max(i-1, 0); i < len(snap) && !w.stopped && cur.off < limit; i++ {
		seg := snap[i]
		if cur.off < seg.Base {
			*cur = cursor{off: seg.Base}
		}
		if cur.off >= seg.Next {
			continue
		}
		w.seg = seg
		if err := l.Read(seg, cur.off, w.put); err != nil {
			return fmt.Errorf("read segment %d of %s-%d at offset %d: %w",
				seg.Base, l.Topic(), l.Partition(), cur.off, err)
		}
		w.segmentDone(seg)
	}
	return w.err
}

// renderer renders the records a segment read hands it into o, from cur
// on and below limit, advancing cur; stopped once o is full (and no flush
// took it). seg is the last segment it rendered from.
type renderer struct {
	k       kind
	cur     *cursor
	limit   int64
	o       *renderOut
	stopped bool
	seg     partlog.Segment
	err     error // a rendering that failed (its schema source did not answer)
	// decoded: the lengths of the last record putDecoded rendered as a
	// JSON line, so that a scan rendering it too does not decode it again
	decoded struct {
		off         int64
		plain, json int64
	}
}

// lensOf returns r's lengths if w just rendered it as a JSON line.
func (w *renderer) lensOf(r *record.Record) (plain, json int64, ok bool) {
	if w == nil || w.k != jsonKind || w.decoded.off != r.Offset || w.decoded.json == 0 {
		return 0, 0, false
	}
	return w.decoded.plain, w.decoded.json, true
}

// failed returns the error that stopped w, if any; nil for a nil w.
func (w *renderer) failed() error {
	if w == nil {
		return nil
	}
	return w.err
}

// put renders r; false when the rendering is done.
func (w *renderer) put(r *record.Record) bool {
	if r.Offset >= w.limit {
		return false
	}
	o, cur := w.o, w.cur
	if o.dec.decodes(r) {
		return w.putDecoded(r)
	}
	if w.k == plainKind && cur.skip == 0 && o.n+len(r.Value)+1 < len(o.dst) {
		// The common case without renderInto: a line that fits with
		// room to spare (a tombstone adds nothing).
		if r.Value != nil {
			o.n += copy(o.dst[o.n:], r.Value)
			o.dst[o.n] = '\n'
			o.n++
		}
		*cur = cursor{off: r.Offset + 1}
		return true
	}
	for {
		var more bool
		o.n, o.buf, more = renderInto(o.dst, o.n, w.k, r, cur, o.buf)
		if more && o.n < len(o.dst) {
			return true
		}
		// o.dst is full, or r goes on in the next buffer.
		if o.flush == nil || !o.flush(o, *cur) {
			w.stopped = true
			return false
		}
		if more {
			return true
		}
	}
}

// putDecoded is put of a record o.dec decodes: rendered into o.buf, then
// delivered as renderInto delivers a rendering that does not fit.
func (w *renderer) putDecoded(r *record.Record) bool {
	o, cur := w.o, w.cur
	var err error
	if w.k == jsonKind {
		var vlen int
		o.buf, vlen, err = o.dec.appendJSON(o.buf[:0], r)
		o.buf = append(o.buf, '\n')
		w.decoded.off, w.decoded.json, w.decoded.plain = r.Offset, int64(len(o.buf)), 0
		if r.Value != nil {
			w.decoded.plain = int64(vlen) + 1
		}
	} else {
		o.buf, err = o.dec.render(o.buf[:0], w.k, r)
	}
	if err != nil {
		w.decoded.json = 0
		w.err, w.stopped = err, true
		return false
	}
	if r.Offset != cur.off {
		cur.skip = 0
	}
	if cur.skip == 0 && o.n > 0 && o.n+len(o.buf) > len(o.dst) {
		// stop at a record boundary, as renderInto does
		*cur = cursor{off: r.Offset}
		if o.flush == nil || !o.flush(o, *cur) {
			w.stopped = true
			return false
		}
	}
	for {
		b := o.buf[min(cur.skip, len(o.buf)):]
		c := copy(o.dst[o.n:], b)
		o.n += c
		if c == len(b) {
			*cur = cursor{off: r.Offset + 1}
			return true
		}
		*cur = cursor{off: r.Offset, skip: cur.skip + c}
		if o.flush == nil || !o.flush(o, *cur) {
			w.stopped = true
			return false
		}
	}
}

// at is put of a record of seg reached by a position lookup; a nil
// renderer stops the read there.
func (w *renderer) at(seg partlog.Segment, r *record.Record) bool {
	if w == nil {
		return false
	}
	w.seg = seg
	return w.put(r)
}

// segmentDone moves cur past the end of seg (up to limit) when the
// rendering read seg to its end. A nil renderer does nothing.
func (w *renderer) segmentDone(seg partlog.Segment) {
	if w == nil || w.seg.ID != seg.ID {
		return
	}
	if next := min(seg.Next, w.limit); !w.stopped && w.cur.off < next {
		*w.cur = cursor{off: next}
	}
}

// renderInto puts the rendering of r (from cur.skip on, when cur is at r)
// into dst[n:] and advances cur past what it delivered. A rendering that
// fits is written in place (one copy of the value); otherwise it goes
// through buf, and only a record that alone does not fit an empty dst is
// split. It returns the new fill of dst, the scratch buffer, and false
// when dst is full (cur is then at the first undelivered byte).
func renderInto(dst []byte, n int, k kind, r *record.Record, cur *cursor, buf []byte) (int, []byte, bool) {
	if r.Offset != cur.off {
		cur.skip = 0
	}
	if cur.skip == 0 {
		free := dst[n:n:len(dst)]
		if out := render(free, k, r); len(out) <= cap(free) {
			// append never outgrew free, so out is dst[n:n+len(out)].
			*cur = cursor{off: r.Offset + 1}
			return n + len(out), buf, true
		}
		if n > 0 {
			// Stop at a record boundary: a record is split only
			// when it alone is larger than dst.
			*cur = cursor{off: r.Offset}
			return n, buf, false
		}
	}
	buf = render(buf[:0], k, r)
	b := buf[min(cur.skip, len(buf)):]
	c := copy(dst[n:], b)
	n += c
	if c < len(b) {
		*cur = cursor{off: r.Offset, skip: cur.skip + c}
		return n, buf, false
	}
	*cur = cursor{off: r.Offset + 1}
	return n, buf, true
}
