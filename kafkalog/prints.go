package kafkalog

import (
	"sort"

	"github.com/partfs/partfs/record"
)

// maxMarks is how many prefix marks a tile keeps.
const maxMarks = 8

// maxHeadTiles is how many tiles keep their batch headers (at most a
// tile's offsets each); a tile read from inside without them is
// checked by the next read from its first offset only.
const maxHeadTiles = 64

// mark is a print of a tile's prefix: a hash of the headers (base
// offset, last offset, CRC) of its batches below offset upto, as fetched
// from the tile's first offset.
type mark struct {
	upto int64
	sum  uint64
}

// printer prints the batches a Read fetches from a tile's first offset
// and compares the prefixes with the tile's marks: compaction or a
// rewrite inside the tile changes a batch's CRC or drops or reshapes
// batches, so a prefix reaching a mark's offset either ends elsewhere or
// hashes differently.
type printer struct {
	lo      int64  // the tile's first offset, where printing began
	next    int64  // the tile's end: batches at or past it are not printed
	at      int64  // the offset after the last batch printed
	sum     uint64 // FNV-1a over the batch headers printed
	old     []mark // the tile's marks when the Read began
	marks   []mark // the marks of this Read, one per fetch answer
	heads   []head // the headers printed
	changed bool   // a prefix disagreed with a mark
	// epoch is the largest leader epoch of the batches printed, end the
	// offset after the last of them
	epoch int32
	end   int64
}

// head is what a print hashes of one batch.
type head struct {
	base, last int64
	crc        uint32
}

func headOf(h *record.BatchHeader) head { return head{h.BaseOffset, h.LastOffset(), h.CRC} }

// batch prints one batch of a fetch answer that began at p.at; batches
// at or past the tile's end, or before p.at, are not printed.
func (p *printer) batch(h *record.BatchHeader) {
	if h.BaseOffset >= p.next || h.LastOffset() < p.at {
		return
	}
	prev := p.at
	p.heads = append(p.heads, headOf(h))
	p.epoch, p.end = max(p.epoch, h.PartitionLeaderEpoch), h.LastOffset()+1
	for _, v := range []uint64{uint64(h.BaseOffset), uint64(h.LastOffset()), uint64(h.CRC)} {
		for i := 0; i < 64; i += 8 {
			p.sum = (p.sum ^ (v >> i & 0xff)) * 1099511628211
		}
	}
	p.at = h.LastOffset() + 1
	for _, m := range p.old {
		if prev < m.upto && m.upto <= p.at && (m.upto != p.at || m.sum != p.sum) {
			p.changed = true
		}
	}
}

// mark marks where the batches printed of one fetch answer end.
func (p *printer) mark() {
	if len(p.marks) < maxMarks && (len(p.marks) == 0 || p.marks[len(p.marks)-1].upto < p.at) {
		p.marks = append(p.marks, mark{p.at, p.sum})
	}
}

// newPrinter starts printing tile base (ending at next) from its first
// offset at.
func (l *Log) newPrinter(base, at, next int64) *printer {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.marks[base]
	if l.printLo[base] != at {
		old = nil // marks of another first offset: not comparable
	}
	return &printer{lo: at, next: next, at: at, sum: 14695981039346656037, old: old, epoch: -1}
}

// printed keeps what a printer saw of tile base: when a prefix
// disagreed with the tile's marks, the tile gets a new ID and the
// change is announced; the marks are then the ones this Read made, or the
// union of both when the tile agreed.
func (l *Log) printed(base int64, p *printer) {
	if p.changed {
		l.bump(base, base+1)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p.marks) == 0 && !p.changed {
		return // nothing fetched
	}
	l.printsDirty = true
	if p.epoch > l.epoch || p.epoch == l.epoch && p.end > l.epochEnd {
		l.epoch, l.epochEnd = p.epoch, p.end
	}
	// fresh: the tile's marks (if any) were made from another first
	// offset (retention moved it; the tile's ID changed with it)
	fresh := l.printLo[base] != p.lo || len(l.marks[base]) == 0
	if fresh {
		l.printLo[base] = p.lo
		l.gen++ // the tile's Stamp changes: a new snapshot
	}
	if p.changed || fresh || len(p.heads) > len(l.heads[base]) {
		l.keepHeads(base, p.heads) // a longer prefix than the one kept, or the tile's new one
	}
	if p.changed || fresh {
		l.marks[base] = p.marks
		if p.changed {
			l.announce()
		}
		return
	}
	ms := append([]mark(nil), l.marks[base]...)
	for _, m := range p.marks {
		if len(ms) < maxMarks && !hasMark(ms, m.upto) {
			ms = append(ms, m)
		}
	}
	l.marks[base] = ms
}

func hasMark(ms []mark, upto int64) bool {
	for _, m := range ms {
		if m.upto == upto {
			return true
		}
	}
	return false
}

// keepHeads keeps the headers hs of tile base, dropping another
// tile's where too many tiles keep theirs. REQUIRES: mu held.
func (l *Log) keepHeads(base int64, hs []head) {
	l.heads[base] = hs
	for b := range l.heads {
		if len(l.heads) <= maxHeadTiles {
			break
		}
		if b != base {
			delete(l.heads, b)
		}
	}
}

// announce closes the channel of Changed. REQUIRES: mu held.
func (l *Log) announce() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// seekCheck checks the first batch a Read from inside tile base meets
// (at offset from or after) against the headers a read from the tile's
// first offset kept: the batch holding from, or the next one. Another
// batch there means the tile was rewritten since.
type seekCheck struct {
	want    head
	checked bool
	differs bool
}

// newSeekCheck returns the check of a Read of tile base from offset
// from, nil when no kept header reaches from.
func (l *Log) newSeekCheck(base, from int64) *seekCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	hs := l.heads[base]
	i := sort.Search(len(hs), func(i int) bool { return hs[i].last >= from })
	if i == len(hs) {
		return nil
	}
	return &seekCheck{want: hs[i]}
}

// batch checks the first batch of offsets at or after from.
func (c *seekCheck) batch(h *record.BatchHeader, from int64) {
	if c == nil || c.checked || h.LastOffset() < from {
		return
	}
	c.checked, c.differs = true, headOf(h) != c.want
}

// seekChecked ends a check of tile base: a tile found rewritten gets
// a new ID, its prints are dropped and the change is announced, so that
// the reader places itself again in the tile's new content.
func (l *Log) seekChecked(base int64, c *seekCheck) {
	if c == nil || !c.differs {
		return
	}
	l.bump(base, base+1)
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.marks, base)
	delete(l.heads, base)
	delete(l.printLo, base)
	l.printsDirty = true
	l.announce()
}
