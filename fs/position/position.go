package position

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Cursor is where a reader continues: skip bytes into the rendering of the
// first record with offset >= off.
type Cursor struct {
	Off  int64
	Skip int
}

func kindLen(k Kind, r *record.Record) int64 {
	if k == Plain {
		return plainLen(r)
	}
	return jsonLen(r) + 1
}

// lens returns the lengths of r's plain and JSON renderings.
func (ly *Layout) lens(r *record.Record) (plain, json int64, err error) {
	if decodes(ly.dec, r) {
		return ly.dec.Lens(r)
	}
	return plainLen(r), jsonLen(r) + 1, nil
}

// kindLen is kindLen of ly's renderings.
func (ly *Layout) kindLen(k Kind, r *record.Record) (int64, error) {
	if !decodes(ly.dec, r) {
		return kindLen(k, r), nil
	}
	plain, json, err := ly.dec.Lens(r)
	if k == Plain {
		return plain, err
	}
	return json, err
}

// PosOf returns the stream position of record off (or of the next
// surviving record when off was removed). REQUIRES: mu held, after sync.
func (ly *Layout) PosOf(k Kind, off int64) (int64, error) {
	return ly.PosRendering(k, off, nil)
}

// PosRendering is posOf that, when w is set and finding the position reads
// the segment holding off, goes on in that same read rendering the records
// from off on into w (the first read of a window comes from its lookup's
// read; no batch is read twice). w.seg is then the segment rendered from;
// w renders nothing when the position needed no read. REQUIRES: mu held,
// after sync.
func (ly *Layout) PosRendering(k Kind, off int64, w *Renderer) (int64, error) {
	i := ly.find(off)
	s := ly.segs[i]
	switch {
	case off <= s.base:
		return s.start[k], nil
	case off >= s.snap.Next:
		if i+1 < len(ly.segs) {
			return ly.segs[i+1].start[k], nil
		}
		return ly.End(k)
	case s.next <= off:
		before, err := ly.scanRendering(s, off, w)
		if err != nil {
			return 0, err
		}
		return s.start[k] + before[k], nil
	}
	ck := s.ckptBefore(func(c Ckpt) bool { return c.Off > off })
	pos := ck.pos[k]
	var lerr error
	err := ly.log.Read(s.snap, ck.Off, func(r *record.Record) bool {
		if r.Offset >= off {
			return w.at(s.snap, r)
		}
		var n int64
		n, lerr = ly.kindLen(k, r)
		pos += n
		return lerr == nil
	})
	if err = cmp.Or(err, lerr, w.failed()); err != nil {
		return 0, ly.readErr(s, ck.Off, err)
	}
	w.segmentDone(s.snap)
	return s.start[k] + pos, nil
}

// ckptBefore returns the last checkpoint before the first one for which
// after is true, or the segment start.
func (s *SegInfo) ckptBefore(after func(Ckpt) bool) Ckpt {
	j := sort.Search(len(s.ckpts), func(j int) bool { return after(s.ckpts[j]) })
	if j == 0 {
		return Ckpt{Off: s.base}
	}
	return s.ckpts[j-1]
}

func (ly *Layout) readErr(s *SegInfo, from int64, err error) error {
	return fmt.Errorf("read segment %d of %s-%d from offset %d: %w",
		s.base, ly.log.Topic(), ly.log.Partition(), from, err)
}

// cursorAt returns the cursor of stream position pos: the record covering
// it and how far into that record, or the next record after a gap.
// REQUIRES: mu held, after sync.
func (ly *Layout) cursorAt(k Kind, pos int64) (Cursor, error) {
	i := ly.findPos(k, pos)
	s := ly.segs[i]
	if pos < s.start[k] {
		return Cursor{Off: s.base}, nil
	}
	rel := pos - s.start[k]
	if rel >= s.length[k] {
		if err := ly.scan(s, s.snap.Next); err != nil {
			return Cursor{}, err
		}
	}
	if rel >= s.length[k] {
		if i+1 < len(ly.segs) {
			return Cursor{Off: ly.segs[i+1].base}, nil
		}
		return Cursor{Off: s.snap.Next}, nil
	}
	ck := s.ckptBefore(func(c Ckpt) bool { return c.pos[k] > rel })
	at, cur, found := ck.pos[k], Cursor{Off: s.next}, false
	var lerr error
	err := ly.log.Read(s.snap, ck.Off, func(r *record.Record) bool {
		var n int64
		if n, lerr = ly.kindLen(k, r); lerr != nil {
			return false
		}
		if at+n > rel {
			cur, found = Cursor{Off: r.Offset, Skip: int(rel - at)}, true
			return false
		}
		at += n
		return true
	})
	if err = cmp.Or(err, lerr); err != nil {
		return Cursor{}, ly.readErr(s, ck.Off, err)
	}
	if !found && i+1 < len(ly.segs) {
		cur = Cursor{Off: ly.segs[i+1].base}
	}
	return cur, nil
}

// RenderOut is where readStream renders: dst[:n] is filled. When dst is
// full, flush (if set) hands it over and installs an empty dst, or returns
// false to end the rendering; without flush the rendering ends when dst is
// full. buf is render scratch.
type RenderOut struct {
	Dec   Decoder // schema-encoded payloads decoded; nil: none
	Dst   []byte
	N     int
	Buf   []byte
	Flush func(o *RenderOut, cur Cursor) bool
}

// ReadStream renders records from cur into o, for records with offsets
// below limit, and advances cur. It fills o.dst with whole records, and
// splits a record only when it alone does not fit (or cur starts inside
// it). A flush continues the same segment read (no batch is read twice
// for consecutive buffers). It never reads the layout.
func ReadStream(l partlog.Log, k Kind, cur *Cursor, limit int64, o *RenderOut) error {
	snap, release := l.Segments()
	defer release()
	i := sort.Search(len(snap), func(i int) bool { return snap[i].Base > cur.Off })
	w := Renderer{K: k, Cur: cur, Limit: limit, O: o}
	for i = max(i-1, 0); i < len(snap) && !w.stopped && cur.Off < limit; i++ {
		seg := snap[i]
		if cur.Off < seg.Base {
			*cur = Cursor{Off: seg.Base}
		}
		if cur.Off >= seg.Next {
			continue
		}
		w.Seg = seg
		if err := l.Read(seg, cur.Off, w.put); err != nil {
			return fmt.Errorf("read segment %d of %s-%d at offset %d: %w",
				seg.Base, l.Topic(), l.Partition(), cur.Off, err)
		}
		w.segmentDone(seg)
	}
	return w.err
}

// Renderer renders the records a segment read hands it into o, from cur
// on and below limit, advancing cur; stopped once o is full (and no flush
// took it). seg is the last segment it rendered from.
type Renderer struct {
	K       Kind
	Cur     *Cursor
	Limit   int64
	O       *RenderOut
	stopped bool
	Seg     partlog.Segment
	err     error // a rendering that failed (its schema source did not answer)
	// decoded: the lengths of the last record putDecoded rendered as a
	// JSON line, so that a scan rendering it too does not decode it again
	decoded struct {
		off         int64
		plain, json int64
	}
}

// lensOf returns r's lengths if w just rendered it as a JSON line.
func (w *Renderer) lensOf(r *record.Record) (plain, json int64, ok bool) {
	if w == nil || w.K != JSON || w.decoded.off != r.Offset || w.decoded.json == 0 {
		return 0, 0, false
	}
	return w.decoded.plain, w.decoded.json, true
}

// failed returns the error that stopped w, if any; nil for a nil w.
func (w *Renderer) failed() error {
	if w == nil {
		return nil
	}
	return w.err
}

// put renders r; false when the rendering is done.
func (w *Renderer) put(r *record.Record) bool {
	if r.Offset >= w.Limit {
		return false
	}
	o, cur := w.O, w.Cur
	if decodes(o.Dec, r) {
		return w.putDecoded(r)
	}
	if w.K == Plain && cur.Skip == 0 && o.N+len(r.Value)+1 < len(o.Dst) {
		// The common case without renderInto: a line that fits with
		// room to spare (a tombstone adds nothing).
		if r.Value != nil {
			o.N += copy(o.Dst[o.N:], r.Value)
			o.Dst[o.N] = '\n'
			o.N++
		}
		*cur = Cursor{Off: r.Offset + 1}
		return true
	}
	for {
		var more bool
		o.N, o.Buf, more = renderInto(o.Dst, o.N, w.K, r, cur, o.Buf)
		if more && o.N < len(o.Dst) {
			return true
		}
		// o.dst is full, or r goes on in the next buffer.
		if o.Flush == nil || !o.Flush(o, *cur) {
			w.stopped = true
			return false
		}
		if more {
			return true
		}
	}
}

// putDecoded is put of a record o.dec decodes. Its rendering goes
// straight into o.dst when it fits there whole (no copy); otherwise it
// lands in o.buf and is delivered from there as renderInto delivers a
// rendering that does not fit.
func (w *Renderer) putDecoded(r *record.Record) bool {
	o, cur := w.O, w.Cur
	if r.Offset != cur.Off {
		cur.Skip = 0
	}
	dst := o.Buf[:0]
	if cur.Skip == 0 {
		dst = o.Dst[o.N:o.N:len(o.Dst)]
	}
	out, err := w.render(dst, r)
	if err != nil {
		w.decoded.json = 0
		w.err, w.stopped = err, true
		return false
	}
	if cur.Skip == 0 && sameArray(out, dst) {
		o.N += len(out)
		*cur = Cursor{Off: r.Offset + 1}
		return true
	}
	// out outgrew o.dst's room (append moved it), or cur is inside r
	o.Buf = out
	if cur.Skip == 0 && o.N > 0 && o.N+len(o.Buf) > len(o.Dst) {
		// stop at a record boundary, as renderInto does
		*cur = Cursor{Off: r.Offset}
		if o.Flush == nil || !o.Flush(o, *cur) {
			w.stopped = true
			return false
		}
	}
	for {
		b := o.Buf[min(cur.Skip, len(o.Buf)):]
		c := copy(o.Dst[o.N:], b)
		o.N += c
		if c == len(b) {
			*cur = Cursor{Off: r.Offset + 1}
			return true
		}
		*cur = Cursor{Off: r.Offset, Skip: cur.Skip + c}
		if o.Flush == nil || !o.Flush(o, *cur) {
			w.stopped = true
			return false
		}
	}
}

// render appends r's rendering of kind w.K to dst; for a JSON line it
// notes the record's lengths in w.decoded.
func (w *Renderer) render(dst []byte, r *record.Record) ([]byte, error) {
	if w.K != JSON {
		return w.O.Dec.Render(dst, w.K, r)
	}
	out, vlen, err := w.O.Dec.AppendJSON(dst, r)
	out = append(out, '\n')
	w.decoded.off, w.decoded.json, w.decoded.plain = r.Offset, int64(len(out)-len(dst)), 0
	if r.Value != nil {
		w.decoded.plain = int64(vlen) + 1
	}
	return out, err
}

// sameArray reports whether out, appended to the empty dst, still lies
// in dst's array (append never had to move it).
func sameArray(out, dst []byte) bool {
	if len(out) == 0 || cap(dst) == 0 {
		return len(out) == 0
	}
	return len(out) <= cap(dst) && &out[0] == &dst[:1][0]
}

// at is put of a record of seg reached by a position lookup; a nil
// renderer stops the read there.
func (w *Renderer) at(seg partlog.Segment, r *record.Record) bool {
	if w == nil {
		return false
	}
	w.Seg = seg
	return w.put(r)
}

// segmentDone moves cur past the end of seg (up to limit) when the
// rendering read seg to its end. A nil renderer does nothing.
func (w *Renderer) segmentDone(seg partlog.Segment) {
	if w == nil || w.Seg.ID != seg.ID {
		return
	}
	if next := min(seg.Next, w.Limit); !w.stopped && w.Cur.Off < next {
		*w.Cur = Cursor{Off: next}
	}
}

// renderInto puts the rendering of r (from cur.skip on, when cur is at r)
// into dst[n:] and advances cur past what it delivered. A rendering that
// fits is written in place (one copy of the value); otherwise it goes
// through buf, and only a record that alone does not fit an empty dst is
// split. It returns the new fill of dst, the scratch buffer, and false
// when dst is full (cur is then at the first undelivered byte).
func renderInto(dst []byte, n int, k Kind, r *record.Record, cur *Cursor, buf []byte) (int, []byte, bool) {
	if r.Offset != cur.Off {
		cur.Skip = 0
	}
	if cur.Skip == 0 {
		free := dst[n:n:len(dst)]
		if out := Render(free, k, r); len(out) <= cap(free) {
			// append never outgrew free, so out is dst[n:n+len(out)].
			*cur = Cursor{Off: r.Offset + 1}
			return n + len(out), buf, true
		}
		if n > 0 {
			// Stop at a record boundary: a record is split only
			// when it alone is larger than dst.
			*cur = Cursor{Off: r.Offset}
			return n, buf, false
		}
	}
	buf = Render(buf[:0], k, r)
	b := buf[min(cur.Skip, len(buf)):]
	c := copy(dst[n:], b)
	n += c
	if c < len(b) {
		*cur = Cursor{Off: r.Offset, Skip: cur.Skip + c}
		return n, buf, false
	}
	*cur = Cursor{Off: r.Offset + 1}
	return n, buf, true
}

// placeIn is cursorAt on the bookkeeping reconciled with a fresh snapshot.
// REQUIRES: mu held.
func (ly *Layout) placeIn(k Kind, pos int64) (Cursor, error) {
	release, err := ly.sync()
	defer release()
	if err != nil {
		return Cursor{}, err
	}
	return ly.cursorAt(k, pos)
}

// Place returns the cursor of stream position pos on a fresh snapshot,
// placing again once if a read found a segment rewritten meanwhile
// (partlog Reads).
func (ly *Layout) Place(k Kind, pos int64) (Cursor, error) {
	ly.mu.Lock()
	defer ly.mu.Unlock()
	for again := true; ; again = false {
		changed := ly.log.Changed()
		cur, err := ly.placeIn(k, pos)
		if err != nil {
			return Cursor{}, err
		}
		select {
		case <-changed:
			if again {
				continue
			}
		default:
		}
		return cur, nil
	}
}
