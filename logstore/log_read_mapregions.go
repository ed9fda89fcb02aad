package logstore

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/partfs/partfs/vfs"
)

// A scan maps a segment's file in regions on a fixed grid of mapRegion
// bytes: region k maps the file's bytes [k*mapRegion, (k+1)*mapRegion +
// mapOverlap), past the file's end too, where the segment grows into it.
// The overlap holds any batch of up to mapOverlap bytes that starts in
// the region, so such a batch is never split between two regions. The
// regions stay mapped after the scan: a later scan of the same bytes (a
// lookup near an earlier one, a re-read) finds their page tables set up,
// which costs about as much again as checking the bytes' CRC (populating
// and unmapping 4 KiB pages of the page cache).
//
// The process keeps at most maxMappedRegions regions and, over all of
// them, at most maxMappedBytes populated (the page-cache pages they count
// in the daemon's RSS); past either, the least recently used regions are
// unmapped, by a goroutine of their own, off the request that went over.
// A segment's regions are unmapped when its files close (retention,
// compaction, the store's close), so a removed segment's blocks are not
// held.
var (
	maxMappedRegions = 1024
	maxMappedBytes   = 256 << 20
)

// regions is the process's mapped regions (not a cache: a mapping holds
// no copy, its bytes are the page cache's).
var regions = &regionSet{byKey: make(map[regionKey]*mappedRegion), lru: list.New()}

// regionSet holds mapped regions of segments, most recently used first.
type regionSet struct {
	mu        sync.Mutex
	byKey     map[regionKey]*mappedRegion
	lru       *list.List // of *mappedRegion
	populated int        // the regions' charges (mappedRegion.charged)
	unmapping sync.WaitGroup
}

// regionKey names region k of segment s.
type regionKey struct {
	s *segment
	k int64
}

// mappedRegion is one region's mapping: Data is the file's bytes
// [start, start+mapRegion+mapOverlap).
type mappedRegion struct {
	key       regionKey
	start     int64
	m         *vfs.Mapping
	elem      *list.Element
	users     int       // scans using it; guarded by regionSet.mu
	out       bool      // out of the set: unmapped by its last user
	charged   int       // of populated.total, in regionSet.populated; guarded by its mu
	populated pageRange // from start
	unmapped  atomic.Bool
}

// get returns region k of s, mapping it if it is not mapped yet, for the
// caller to release; errNotMapped when it cannot be mapped.
func (c *regionSet) get(s *segment, k int64) (*mappedRegion, error) {
	key := regionKey{s, k}
	c.mu.Lock()
	if w := c.byKey[key]; w != nil {
		w.users++
		c.lru.MoveToFront(w.elem)
		c.mu.Unlock()
		return w, nil
	}
	c.mu.Unlock()
	m, err := vfs.Map(s.log, k*mapRegion, mapRegion+mapOverlap)
	if err != nil {
		return nil, errNotMapped
	}
	w := &mappedRegion{key: key, start: k * mapRegion, m: m, users: 1}
	var unmap []*mappedRegion
	c.mu.Lock()
	if s.closed.Load() { // closed while it was mapped: not kept
		w.out = true
	} else if old := c.byKey[key]; old != nil { // mapped meanwhile by another scan
		old.users++
		c.lru.MoveToFront(old.elem)
		w.out, w.users, unmap = true, 0, append(unmap, w)
		w = old
	} else {
		c.byKey[key] = w
		w.elem = c.lru.PushFront(w)
		unmap = c.trim(unmap)
	}
	c.mu.Unlock()
	c.unmapLater(unmap)
	return w, nil
}

// release ends a scan's use of w, charging the set with what it
// populated.
func (c *regionSet) release(w *mappedRegion) {
	var unmap []*mappedRegion
	c.mu.Lock()
	w.users--
	last := w.out && w.users == 0 // dropped while in use: unmapped here
	if !w.out {
		total := min(w.populated.populatedBytes(), len(w.m.Data))
		c.populated += total - w.charged
		w.charged = total
		unmap = c.trim(unmap) // w among them if it is dropped now
	}
	c.mu.Unlock()
	c.unmapLater(unmap)
	if last {
		w.unmap()
	}
}

// unmap unmaps w's mapping, once: a second call does nothing (another
// mapping may have its addresses by then).
func (w *mappedRegion) unmap() {
	if !w.unmapped.Swap(true) {
		w.m.Unmap()
	}
}

// trim drops the least recently used regions while the set holds more
// than maxMappedRegions, or more than maxMappedBytes populated, keeping
// the most recent one. REQUIRES: c.mu held.
func (c *regionSet) trim(unmap []*mappedRegion) []*mappedRegion {
	for c.lru.Len() > 1 && (c.lru.Len() > maxMappedRegions || c.populated > maxMappedBytes) {
		unmap = c.drop(c.lru.Back().Value.(*mappedRegion), unmap)
	}
	return unmap
}

// dropSegment takes s's regions out of the set: those no scan uses are
// unmapped by a goroutine of their own (closeFiles may hold the log's
// mutex, and unmapping 8 MiB of pages takes a fraction of a millisecond),
// the others by their last scan when it ends.
func (c *regionSet) dropSegment(s *segment) {
	var unmap []*mappedRegion
	c.mu.Lock()
	for key, w := range c.byKey {
		if key.s == s {
			unmap = c.drop(w, unmap)
		}
	}
	c.mu.Unlock()
	c.unmapLater(unmap)
}

// held is how many regions of s the set holds.
func (c *regionSet) held(s *segment) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for key := range c.byKey {
		if key.s == s {
			n++
		}
	}
	return n
}

// drop takes w out of the set and adds it to unmap if no scan uses it.
// REQUIRES: c.mu held.
func (c *regionSet) drop(w *mappedRegion, unmap []*mappedRegion) []*mappedRegion {
	delete(c.byKey, w.key)
	c.lru.Remove(w.elem)
	c.populated -= w.charged
	w.out = true
	if w.users == 0 {
		unmap = append(unmap, w)
	}
	return unmap
}

// unmapLater unmaps ws on a goroutine of its own: unmapping a region's
// populated pages costs about what populating them did, which the
// request that dropped them need not wait for.
func (c *regionSet) unmapLater(ws []*mappedRegion) {
	if len(ws) > 0 {
		c.unmapping.Go(func() {
			for _, w := range ws {
				w.unmap()
			}
		})
	}
}

// settle waits for the regions dropped so far to be unmapped.
func (c *regionSet) settle() { c.unmapping.Wait() }
