package position

import (
	"cmp"
	"fmt"
	"sort"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// ckptEvery is the rendering distance between position checkpoints.
const ckptEvery = 64 << 10

// Ckpt ties a record offset to its rendered positions, relative to the
// start of its segment's range, in both streams.
type Ckpt struct {
	Off int64
	pos [2]int64
}

// SegInfo is the position bookkeeping of one segment.
type SegInfo struct {
	base  int64
	id    uint64
	stamp uint64   // partlog.Segment.Stamp of the content
	start [2]int64 // the segment's range starts, per stream; -1 if unknown

	// What has been rendered of the content with this id: records with
	// offsets < next, of total lengths length, with checkpoints.
	next   int64
	size   int64 // segment file size when next was reached (identity across mounts)
	length [2]int64
	ckpts  []Ckpt
	lastCk [2]int64
	// afterBig: the last append accounted for (noteAppend) was a big one
	// (batchCkpt); not kept across mounts
	afterBig bool

	snap partlog.Segment // the latest snapshot descriptor
}

func (s *SegInfo) resetContent() {
	s.next, s.size, s.length, s.ckpts, s.lastCk = s.base, 0, [2]int64{}, nil, [2]int64{}
}

// adopt decides whether bookkeeping loaded from the sidecar (id 0: IDs do
// not survive a remount) still describes sg: the same base and a known
// stamp (a rewrite, such as compaction, changes it), and the segment at
// least as long with at least the records scanned.
func (s *SegInfo) adopt(sg partlog.Segment) bool {
	return s.id == 0 && s.stamp != 0 && s.stamp == sg.Stamp && sg.Size >= s.size && sg.Next >= s.next
}

// Decoder renders records whose keys or values are schema-encoded
// differently from docs/spec.md §3 (the filesystem's schema decoding).
type Decoder interface {
	// Decodes reports whether r renders differently; the other methods
	// are called only for such a record.
	Decodes(r *record.Record) bool
	// Lens returns the lengths of r's plain and JSON renderings.
	Lens(r *record.Record) (plain, json int64, err error)
	// Render appends r's rendering of kind k to dst.
	Render(dst []byte, k Kind, r *record.Record) ([]byte, error)
	// AppendJSON appends r's JSON object (no newline) and returns the
	// length of its value's plain rendering (without the newline).
	AppendJSON(dst []byte, r *record.Record) (out []byte, valueLen int, err error)
}

// decodes reports whether d (nil: none) renders r differently.
func decodes(d Decoder, r *record.Record) bool { return d != nil && d.Decodes(r) }

// Layout keeps the stable positions of a partition's rendered streams.
// The Layouts that With returns share its state.
type Layout struct {
	*layoutState
	log partlog.Log // the partition, or the same bound to one request (With)
}

// layoutState is a partition's position bookkeeping.
type layoutState struct {
	lg  *logrus.Entry
	dec Decoder // schema-encoded payloads decoded; nil: none

	mu    sync.Mutex
	segs  []*SegInfo        // REQUIRES: mu held; by base, as of the last sync
	last  []partlog.Segment // REQUIRES: mu held; the snapshot segs reconcile, nil if none
	dirty bool              // REQUIRES: mu held; sidecar out of date
}

func NewLayout(l partlog.Log, lg *logrus.Entry) *Layout {
	return NewDecodingLayout(l, lg, nil)
}

// With returns the same layout (sharing its state) reading the partition
// through l, the same partition bound to one request (partlog.Bounded).
func (ly *Layout) With(l partlog.Log) *Layout {
	return &Layout{layoutState: ly.layoutState, log: l}
}

// Decoder returns the decoder ly renders with (nil: none).
func (ly *Layout) Decoder() Decoder { return ly.dec }

// NewDecodingLayout is NewLayout of renderings that decode with dec.
func NewDecodingLayout(l partlog.Log, lg *logrus.Entry, dec Decoder) *Layout {
	ly := &Layout{layoutState: &layoutState{lg: lg, dec: dec}, log: l}
	ly.load()
	return ly
}

// sync reconciles the bookkeeping with a fresh snapshot. The caller must
// call release when done reading through the snapshot. A snapshot that is
// the very one reconciled last (a backend hands out a snapshot again only
// while nothing in it changed, partlog) costs nothing more, so a lookup in
// a partition of thousands of segments (a cluster's tiles) does not walk
// them; another is merged with the bookkeeping in one pass by base.
// REQUIRES: mu held.
func (ly *Layout) sync() (release func(), err error) {
	snap, release := ly.log.Segments()
	if sameSnapshot(snap, ly.last) {
		return release, nil
	}
	ly.last = nil
	segs := make([]*SegInfo, 0, len(snap))
	j := 0
	for _, sg := range snap {
		for j < len(ly.segs) && ly.segs[j].base < sg.Base {
			j++
		}
		var inf *SegInfo
		if j < len(ly.segs) && ly.segs[j].base == sg.Base {
			inf = ly.segs[j]
		}
		switch {
		case inf == nil:
			inf = &SegInfo{base: sg.Base, id: sg.ID, stamp: sg.Stamp, start: [2]int64{-1, -1}}
			inf.resetContent()
			ly.dirty = true
		case inf.adopt(sg):
			inf.id = sg.ID
		case inf.id != sg.ID || sg.Next < inf.next:
			inf.id, inf.stamp = sg.ID, sg.Stamp
			inf.resetContent()
			ly.dirty = true
		case inf.stamp != sg.Stamp:
			// the same content, now with a stamp (a backend that could
			// not tell gained a fingerprint of it)
			inf.stamp = sg.Stamp
			ly.dirty = true
		}
		inf.snap = sg
		segs = append(segs, inf)
	}
	prev := ly.segs
	ly.segs = segs
	if err := ly.assignStarts(prev); err != nil {
		release()
		return func() {}, err
	}
	ly.last = snap
	return release, nil
}

// sameSnapshot reports that a and b are one snapshot (not merely equal).
func sameSnapshot(a, b []partlog.Segment) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// placeScans is how many segments with slots one sync reads to place
// their successors right after them; past that, a segment is placed at
// its slot. A partition of up to that many tiles that a mount finds
// unread is laid out densely at once; a longer one reads a bounded
// amount before its end is known.
const placeScans = 16

// assignStarts gives every segment without a known start one: the end of
// its predecessor's content as rendered now, bounded by the next known
// start; for a segment with a slot whose predecessor is not wholly
// rendered, the predecessor is read to know that end while placeScans
// allows, and the segment placed at its slot otherwise (or right after
// what is known of its predecessor, if that ends past the slot).
// REQUIRES: mu held.
func (ly *Layout) assignStarts(prev []*SegInfo) error {
	scans := placeScans
	for i, s := range ly.segs {
		if s.start[0] >= 0 {
			continue
		}
		if i == 0 {
			s.start = ly.startAfterRemoved(prev, s.base, s.snap.Slot)
			continue
		}
		p := ly.segs[i-1]
		if slot := s.snap.Slot; slot > 0 && p.next < p.snap.Next {
			if scans == 0 {
				for k := range s.start {
					s.start[k] = max(slot, p.start[k]+p.length[k])
				}
				continue
			}
			scans--
		}
		if err := ly.scan(p, p.snap.Next); err != nil {
			return err
		}
		for k := range s.start {
			s.start[k] = p.start[k] + p.length[k]
		}
		if i+1 < len(ly.segs) && ly.segs[i+1].start[0] >= 0 {
			for k := range s.start {
				s.start[k] = min(s.start[k], ly.segs[i+1].start[k])
			}
		}
	}
	return nil
}

// startAfterRemoved places a first segment never seen before: after the
// end of the last removed segment that preceded it, or at its slot (0 if
// none).
func (ly *Layout) startAfterRemoved(prev []*SegInfo, base, slot int64) [2]int64 {
	st := [2]int64{slot, slot}
	for _, p := range prev {
		if p.base < base && p.start[0] >= 0 {
			st = [2]int64{p.start[0] + p.length[0], p.start[1] + p.length[1]}
		}
	}
	return st
}

// scan renders s's content from s.next up to offset upTo (at most the
// snapshot's end), extending lengths and checkpoints.
// REQUIRES: mu held.
func (ly *Layout) scan(s *SegInfo, upTo int64) error {
	_, err := ly.scanRendering(s, upTo, nil)
	return err
}

// scanRendering is scan that, when w is set, goes on in the same read
// rendering the records from upTo on into w (accounting for them too). It
// returns the lengths before the first record at or after upTo.
// REQUIRES: mu held.
func (ly *Layout) scanRendering(s *SegInfo, upTo int64, w *Renderer) (before [2]int64, err error) {
	upTo = min(upTo, s.snap.Next)
	if s.next >= upTo {
		return s.length, nil
	}
	reached, whole := false, true
	var lerr error
	err = ly.log.Read(s.snap, s.next, func(r *record.Record) bool {
		if r.Offset >= upTo {
			if !reached {
				reached, before = true, s.length
			}
			if !w.at(s.snap, r) {
				whole = false
				return false
			}
		}
		plain, json, ok := w.lensOf(r)
		if !ok {
			if plain, json, lerr = ly.lens(r); lerr != nil {
				whole = false
				return false
			}
		}
		s.add(r.Offset, plain, json)
		return true
	})
	err = cmp.Or(err, lerr, w.failed())
	if err != nil {
		return before, fmt.Errorf("scan segment %d of %s-%d from offset %d: %w",
			s.base, ly.log.Topic(), ly.log.Partition(), s.next, err)
	}
	if !reached {
		before = s.length
	}
	w.segmentDone(s.snap)
	if whole {
		s.next, s.size = s.snap.Next, s.snap.Size
	}
	ly.dirty = true
	return before, nil
}

// ckptDue reports that a record rendered from pos on is add's next
// checkpoint: pos is ckptEvery or more past the last one in either
// rendering.
func (s *SegInfo) ckptDue(pos [2]int64) bool {
	return pos[0]-s.lastCk[0] >= ckptEvery || pos[1]-s.lastCk[1] >= ckptEvery
}

// add accounts for the record at offset off, rendered in plain and json
// bytes (line ends included). REQUIRES: the layout's mu held.
func (s *SegInfo) add(off, plain, json int64) {
	if s.ckptDue(s.length) {
		s.ckpts = append(s.ckpts, Ckpt{Off: off, pos: s.length})
		s.lastCk = s.length
	}
	s.length[Plain] += plain
	s.length[JSON] += json
	s.next = off + 1
}

// batchCkpt places a checkpoint at first, the first record of an append
// (its first batch: one per write() by default, docs/spec.md §4), when the append
// is big (ckptEvery bytes or more of log) or follows a big one, unless
// one is there already or add's spacing puts one there. A lookup of a
// record in that batch, or of the first one after it (where @time/T
// lands), then starts reading at that batch, not at a checkpoint inside
// the batch before it (1 MiB for a `cat >> log` write()). The spacing of
// the other checkpoints stays add's, so appends keep the checkpoints a
// scan of the log places, and these besides. REQUIRES: the layout's mu
// held, s.next == first.
func (s *SegInfo) batchCkpt(first int64, big bool) {
	lastOff := s.base
	if len(s.ckpts) > 0 {
		lastOff = s.ckpts[len(s.ckpts)-1].Off
	}
	if (big || s.afterBig) && first > lastOff && !s.ckptDue(s.length) {
		s.ckpts = append(s.ckpts, Ckpt{Off: first, pos: s.length})
	}
	s.afterBig = big
}

// addRun is add for records from..to-1 of an append at offset first, as
// the append's running totals sums give their lengths, each record's JSON
// length being its fields' plus perJSON. It places the checkpoints add
// would, found by binary search instead of record by record. REQUIRES:
// the layout's mu held.
func (s *SegInfo) addRun(first int64, sums []recLen, from, to int, perJSON int64) {
	var base recLen
	if from > 0 {
		base = sums[from-1]
	}
	// lengths of the stream ends before record k (from <= k <= to)
	before := func(k int) [2]int64 {
		if k == from {
			return s.length
		}
		c := sums[k-1]
		return [2]int64{s.length[0] + c.plain - base.plain, s.length[1] + c.fields - base.fields + int64(k-from)*perJSON}
	}
	for k := from; ; {
		j := k + sort.Search(to-k, func(d int) bool {
			return s.ckptDue(before(k + d))
		})
		if j == to {
			break
		}
		pos := before(j)
		s.ckpts = append(s.ckpts, Ckpt{Off: first + int64(j), pos: pos})
		s.lastCk, k = pos, j+1
	}
	s.length, s.next = before(to), first+int64(to)
}

func plainLen(r *record.Record) int64 {
	if r.Value == nil {
		return 0
	}
	return int64(len(r.Value)) + 1
}

// find returns the index of the last segment with base <= off, or 0.
// REQUIRES: mu held.
func (ly *Layout) find(off int64) int {
	i := sort.Search(len(ly.segs), func(i int) bool { return ly.segs[i].base > off })
	return max(i-1, 0)
}

// findPos returns the index of the last segment whose range starts at or
// before pos, or 0. REQUIRES: mu held.
func (ly *Layout) findPos(k Kind, pos int64) int {
	i := sort.Search(len(ly.segs), func(i int) bool { return ly.segs[i].start[k] > pos })
	return max(i-1, 0)
}

// End returns the end position of stream k (the st_size of `log`).
// REQUIRES: mu held, after sync.
func (ly *Layout) End(k Kind) (int64, error) {
	last := ly.segs[len(ly.segs)-1]
	if err := ly.scan(last, last.snap.Next); err != nil {
		return 0, err
	}
	return last.start[k] + last.length[k], nil
}

// WithSync runs fn on the bookkeeping reconciled with a fresh snapshot,
// under mu; the snapshot is released when fn returns.
func (ly *Layout) WithSync(fn func() error) error {
	ly.mu.Lock()
	defer ly.mu.Unlock()
	release, err := ly.sync()
	defer release()
	if err != nil {
		return err
	}
	return fn()
}

// Gapless reports whether stream k has no gap: the first segment's range
// starts at 0 and each segment's content, wholly accounted for, ends where
// the next one's range starts. REQUIRES: mu held, after sync.
func (ly *Layout) Gapless(k Kind) bool {
	if ly.segs[0].start[k] != 0 {
		return false
	}
	for i := 1; i < len(ly.segs); i++ {
		p, s := ly.segs[i-1], ly.segs[i]
		if p.next < p.snap.Next || p.start[k]+p.length[k] != s.start[k] {
			return false
		}
	}
	return true
}

// Gaps returns how many bytes of stream k up to its end hold no record:
// those before the first segment's range (removed by retention) and
// between a segment's rendered content and the next segment's range.
// Segments not wholly rendered whose successors have slots (tiles of a
// cluster) are rendered first when there are at most placeScans of them;
// otherwise, or without slots (a local segment, which may be large), exact
// is false, their unrendered records count as gap and the figure is an
// upper bound. REQUIRES: mu held, after sync.
func (ly *Layout) Gaps(k Kind) (bytes int64, exact bool, err error) {
	var unread []*SegInfo
	for i, s := range ly.segs[:len(ly.segs)-1] {
		if s.next < s.snap.Next && ly.segs[i+1].snap.Slot > 0 {
			unread = append(unread, s)
		}
	}
	if len(unread) <= placeScans {
		for _, s := range unread {
			if err := ly.scan(s, s.snap.Next); err != nil {
				return 0, false, err
			}
		}
	}
	bytes, exact = ly.segs[0].start[k], true
	for i := 1; i < len(ly.segs); i++ {
		p, s := ly.segs[i-1], ly.segs[i]
		bytes += max(s.start[k]-p.start[k]-p.length[k], 0)
		if p.next < p.snap.Next {
			exact = false
		}
	}
	return bytes, exact, nil
}

// gaplessIn reports whether stream k has no gap in positions [from, to):
// the first segment's range starts at or before from, and no segment's
// content ends inside the range before the next one's range starts (a
// segment not wholly accounted for is scanned to know). REQUIRES: mu
// held, after sync.
func (ly *Layout) GaplessIn(k Kind, from, to int64) (bool, error) {
	if ly.segs[0].start[k] > from {
		return false, nil
	}
	for i := 1; i < len(ly.segs); i++ {
		p, s := ly.segs[i-1], ly.segs[i]
		if s.start[k] <= from || p.start[k] >= to {
			continue
		}
		if p.next < p.snap.Next {
			if err := ly.scan(p, p.snap.Next); err != nil {
				return false, err
			}
		}
		if end := p.start[k] + p.length[k]; end != s.start[k] && end < to {
			return false, nil
		}
	}
	return true, nil
}

// NoteAppend accounts for records just appended at offsets first.. (as m
// measured them) so that a stat after a write does not read them back. It
// only does so when they surely landed right after what is known of the
// active segment; else a later scan reads them. Timestamps <= 0 were set
// to now by the log (13 digits, as is any epoch-ms time between 2001 and
// 2286); a record with a timestamp of another width is left to the scan,
// as the log may replace it (LogAppendTime). So every timestamp has as
// many digits as now, and now stands in for each in the JSON length.
func (ly *Layout) NoteAppend(first int64, m *Measurement, now int64) {
	tsLen := func(ts int64) int64 { return jsonl.LenAt(0, 0, ts) } // its digits' share
	if m.maxTs > 0 && (tsLen(m.minTs) != tsLen(now) || tsLen(m.maxTs) != tsLen(now)) {
		return
	}
	ly.mu.Lock()
	defer ly.mu.Unlock()
	n := len(m.sums)
	var prev *SegInfo
	for _, s := range ly.landed(first, int64(n)) {
		if s.start[0] < 0 { // a segment the append began: right after prev
			for k := range s.start {
				s.start[k] = prev.start[k] + prev.length[k]
			}
		}
		prev = s
		from, to := int(max(s.base-first, 0)), int(min(s.snap.Next-first, int64(n)))
		if from >= to {
			continue
		}
		s.batchCkpt(first+int64(from), m.sums[to-1].plain-m.sumBefore(from).plain >= ckptEvery)
		// The offset's and timestamp's share of a JSON length changes
		// only where the offset gains a digit, rarely inside one
		// append: the records between are added as one run.
		for from < to {
			at := jsonl.LenAt(0, first+int64(from), now)
			k := from + sort.Search(to-from, func(d int) bool { return jsonl.LenAt(0, first+int64(from+d), now) != at })
			s.addRun(first, m.sums, from, k, at+1)
			from = k
		}
	}
	ly.dirty = true
}

// landed returns the bookkeeping of the segments that n records appended
// at offset first landed in, when they surely landed right after what it
// accounts for, else nil. Segments the append began (a roll, or the
// tiles of a cluster it filled) are placed right after their
// predecessors, so what this mount writes is laid out densely: an append
// that spans segments is accounted for only when nothing else landed
// after it (the log ends right after it) and the segment it began in
// kept its ID. REQUIRES: mu held.
func (ly *Layout) landed(first, n int64) []*SegInfo {
	if len(ly.segs) == 0 || ly.segs[len(ly.segs)-1].next != first {
		return nil
	}
	s := ly.segs[len(ly.segs)-1]
	snap, release := ly.log.Segments()
	defer release()
	k := sort.Search(len(snap), func(i int) bool { return snap[i].Base >= s.base })
	if k == len(snap) || snap[k].Base != s.base || snap[k].ID != s.id {
		return nil
	}
	last := snap[len(snap)-1]
	if last.Next < first+n || (k < len(snap)-1 && last.Next != first+n) {
		return nil
	}
	for i := k + 1; i < len(snap); i++ {
		if snap[i].Base != snap[i-1].Next {
			return nil // not one run of offsets
		}
	}
	s.snap = snap[k]
	out := []*SegInfo{s}
	for _, sg := range snap[k+1:] {
		inf := &SegInfo{base: sg.Base, id: sg.ID, stamp: sg.Stamp, snap: sg, start: [2]int64{-1, -1}}
		inf.resetContent()
		out = append(out, inf)
	}
	// noteAppend places the new segments after their predecessors once
	// it accounted for those; the next sync merges them with its
	// snapshot as segments it knows.
	ly.segs = append(ly.segs, out[1:]...)
	ly.last = nil
	return out
}

// FirstBase is the base offset of the first segment. REQUIRES: inside
// WithSync.
func (ly *Layout) FirstBase() int64 { return ly.segs[0].base }

// LastNext is the offset after the last segment's records. REQUIRES:
// inside WithSync.
func (ly *Layout) LastNext() int64 { return ly.segs[len(ly.segs)-1].snap.Next }
