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
// The process keeps at most mapCacheRegions regions and, over all of
// them, at most mapCacheBytes populated (the page-cache pages they count
// in the daemon's RSS); past either, the least recently used regions are
// unmapped, by a goroutine of their own, off the request that went over.
// A segment's regions are unmapped when its files close (retention,
// compaction, the store's close), so a removed segment's blocks are not
// held.
var (
	mapCacheRegions = 1024
	mapCacheBytes   = 256 << 20
)

// mapCache is the process's cache of mapped regions.
var mapCache = &regionCache{wins: make(map[regionKey]*mappedRegion), lru: list.New()}

// regionCache holds mapped regions of segments, most recently used first.
type regionCache struct {
	mu        sync.Mutex
	wins      map[regionKey]*mappedRegion
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
	users     int       // scans using it; guarded by regionCache.mu
	out       bool      // out of the cache: unmapped by its last user
	charged   int       // of populated.total, in regionCache.populated; guarded by its mu
	populated pageRange // from start
	unmapped  atomic.Bool
}

// get returns region k of s, mapping it if it is not cached, for the
// caller to release; errNotMapped when it cannot be mapped.
func (c *regionCache) get(s *segment, k int64) (*mappedRegion, error) {
	key := regionKey{s, k}
	c.mu.Lock()
	if w := c.wins[key]; w != nil {
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
	if s.closed.Load() { // closed while it was mapped: not cached
		w.out = true
	} else if old := c.wins[key]; old != nil { // mapped meanwhile by another scan
		old.users++
		c.lru.MoveToFront(old.elem)
		w.out, w.users, unmap = true, 0, append(unmap, w)
		w = old
	} else {
		c.wins[key] = w
		w.elem = c.lru.PushFront(w)
		unmap = c.trim(unmap)
	}
	c.mu.Unlock()
	c.unmapLater(unmap)
	return w, nil
}

// release ends a scan's use of w, charging the cache with what it
// populated.
func (c *regionCache) release(w *mappedRegion) {
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

// trim drops the least recently used regions while the cache holds more
// than mapCacheRegions, or more than mapCacheBytes populated, keeping
// the most recent one. REQUIRES: c.mu held.
func (c *regionCache) trim(unmap []*mappedRegion) []*mappedRegion {
	for c.lru.Len() > 1 && (c.lru.Len() > mapCacheRegions || c.populated > mapCacheBytes) {
		unmap = c.drop(c.lru.Back().Value.(*mappedRegion), unmap)
	}
	return unmap
}

// dropSegment takes s's regions out of the cache: those no scan uses are
// unmapped by a goroutine of their own (closeFiles may hold the log's
// mutex, and unmapping 8 MiB of pages takes a fraction of a millisecond),
// the others by their last scan when it ends.
func (c *regionCache) dropSegment(s *segment) {
	var unmap []*mappedRegion
	c.mu.Lock()
	for key, w := range c.wins {
		if key.s == s {
			unmap = c.drop(w, unmap)
		}
	}
	c.mu.Unlock()
	c.unmapLater(unmap)
}

// cached is how many regions of s the cache holds.
func (c *regionCache) cached(s *segment) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for key := range c.wins {
		if key.s == s {
			n++
		}
	}
	return n
}

// drop takes w out of the cache and adds it to unmap if no scan uses it.
// REQUIRES: c.mu held.
func (c *regionCache) drop(w *mappedRegion, unmap []*mappedRegion) []*mappedRegion {
	delete(c.wins, w.key)
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
func (c *regionCache) unmapLater(ws []*mappedRegion) {
	if len(ws) > 0 {
		c.unmapping.Go(func() {
			for _, w := range ws {
				w.unmap()
			}
		})
	}
}

// settle waits for the regions dropped so far to be unmapped.
func (c *regionCache) settle() { c.unmapping.Wait() }
