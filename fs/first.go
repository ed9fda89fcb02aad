package fs

import (
	"slices"
	"sort"
	"sync"

	"github.com/partfs/partfs/partlog"
)

// firstRender is how much of a window its lookup renders: what the first
// read of `head` (8 KiB) or a pager needs. Later reads render ahead as
// usual.
const firstRender = 16 << 10

// maxFirsts bounds the windows of a partition that hold a first rendering
// nobody opened yet (`stat` of many names); the oldest lose theirs.
const maxFirsts = 16

// firstChunk is what a window's lookup rendered of the window's first
// bytes, in the read that found its position, for its first open to
// deliver: records of segment seg below limit.
type firstChunk struct {
	c       *chunk
	seg     partlog.Segment
	limit   int64
	changed <-chan struct{} // the log's Changed as of the lookup
}

// valid reports that the records f holds are still those of the log: it
// did not change since the lookup, or seg is still there with its ID.
func (f *firstChunk) valid(l partlog.Log) bool {
	select {
	case <-f.changed:
	default:
		return true
	}
	snap, release := l.Segments()
	defer release()
	i := sort.Search(len(snap), func(i int) bool { return snap[i].Base >= f.seg.Base })
	return i < len(snap) && snap[i].Base == f.seg.Base && snap[i].ID == f.seg.ID
}

// firsts keeps the windows of a partition holding an unopened first
// rendering, oldest first, at most maxFirsts of them.
type firsts struct {
	mu    sync.Mutex
	nodes []*viewNode // REQUIRES: mu held
}

// add gives n its first rendering f, taking it from the oldest window
// when too many hold one.
func (fs *firsts) add(n *viewNode, f *firstChunk) {
	if old := n.swapFirst(f); old != nil {
		old.c.unref() // a name looked up again
	}
	fs.mu.Lock()
	if i := slices.Index(fs.nodes, n); i >= 0 {
		// a name looked up again moves to the back, held once
		fs.nodes = slices.Delete(fs.nodes, i, i+1)
	}
	fs.nodes = append(fs.nodes, n)
	var oldest *viewNode
	if len(fs.nodes) > maxFirsts {
		oldest = fs.nodes[0]
		fs.nodes = append(fs.nodes[:0], fs.nodes[1:]...)
	}
	fs.mu.Unlock()
	if oldest != nil {
		oldest.dropFirst()
	}
}

// takeFirst returns the first bytes rendered at lookup (nil if none) when
// an open whose end offset is limit may deliver them.
func (n *viewNode) takeFirst(limit int64) *chunk {
	f := n.swapFirst(nil)
	if f == nil {
		return nil
	}
	if f.limit <= limit && f.valid(n.p.log) {
		return f.c
	}
	f.c.unref()
	return nil
}

// dropFirst lets go of an unopened first rendering.
func (n *viewNode) dropFirst() {
	if f := n.swapFirst(nil); f != nil {
		f.c.unref()
	}
}

// swapFirst gives n the first rendering f (nil for none) and returns the
// one it held.
func (n *viewNode) swapFirst(f *firstChunk) *firstChunk {
	n.mu.Lock()
	defer n.mu.Unlock()
	old := n.first
	n.first = f
	return old
}
