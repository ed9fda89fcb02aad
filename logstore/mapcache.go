package logstore

import (
	"container/list"
	"sync"

	"github.com/partfs/partfs/vfs"
)

// A scan maps a segment's file in windows of mapWindow bytes on a fixed
// grid (window k maps the file's bytes [k*mapWindow, (k+1)*mapWindow),
// past the file's end too, where the segment grows into it), and keeps
// them mapped after it: a later scan of the same bytes finds their page
// tables set up, which costs about as much again as checking the bytes'
// CRC (populating and unmapping 4 KiB pages of the page cache). The
// process keeps at most mapCacheWindows windows, the least recently used
// unmapped first, and a segment's windows are unmapped when its files
// close (retention, compaction, the store's close), so a removed
// segment's blocks are not held.
var mapCacheWindows = 32

// mapCache is the process's cache of mapped windows.
var mapCache = &windowCache{wins: make(map[windowKey]*mappedWindow), lru: list.New()}

// windowCache holds mapped windows of segments, most recently used first.
type windowCache struct {
	mu   sync.Mutex
	wins map[windowKey]*mappedWindow
	lru  *list.List // of *mappedWindow
}

// windowKey names window k of segment s.
type windowKey struct {
	s *segment
	k int64
}

// mappedWindow is one window's mapping: Data is the file's bytes
// [start, start+mapWindow).
type mappedWindow struct {
	key       windowKey
	start     int64
	m         *vfs.Mapping
	elem      *list.Element
	users     int       // scans using it; guarded by windowCache.mu
	out       bool      // out of the cache: unmapped by its last user
	populated pageRange // from start
}

// get returns window k of s, mapping it if it is not cached, for the
// caller to release; errNotMapped when it cannot be mapped.
func (c *windowCache) get(s *segment, k int64) (*mappedWindow, error) {
	key := windowKey{s, k}
	c.mu.Lock()
	if w := c.wins[key]; w != nil {
		w.users++
		c.lru.MoveToFront(w.elem)
		c.mu.Unlock()
		return w, nil
	}
	c.mu.Unlock()
	m, err := vfs.Map(s.log, k*mapWindow, mapWindow)
	if err != nil {
		return nil, errNotMapped
	}
	w := &mappedWindow{key: key, start: k * mapWindow, m: m, users: 1}
	var unmap []*mappedWindow
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
		for c.lru.Len() > mapCacheWindows {
			unmap = c.drop(c.lru.Back().Value.(*mappedWindow), unmap)
		}
	}
	c.mu.Unlock()
	unmapAll(unmap)
	return w, nil
}

// release ends a scan's use of w.
func (c *windowCache) release(w *mappedWindow) {
	c.mu.Lock()
	w.users--
	last := w.out && w.users == 0
	c.mu.Unlock()
	if last {
		w.m.Unmap()
	}
}

// dropSegment takes s's windows out of the cache: those no scan uses are
// unmapped by a goroutine of their own (closeFiles may hold the log's
// mutex, and unmapping 8 MiB of pages takes a fraction of a millisecond),
// the others by their last scan when it ends.
func (c *windowCache) dropSegment(s *segment) {
	var unmap []*mappedWindow
	c.mu.Lock()
	for key, w := range c.wins {
		if key.s == s {
			unmap = c.drop(w, unmap)
		}
	}
	c.mu.Unlock()
	if len(unmap) > 0 {
		go unmapAll(unmap)
	}
}

// cached is how many windows of s the cache holds.
func (c *windowCache) cached(s *segment) int {
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
func (c *windowCache) drop(w *mappedWindow, unmap []*mappedWindow) []*mappedWindow {
	delete(c.wins, w.key)
	c.lru.Remove(w.elem)
	w.out = true
	if w.users == 0 {
		unmap = append(unmap, w)
	}
	return unmap
}

func unmapAll(ws []*mappedWindow) {
	for _, w := range ws {
		w.m.Unmap()
	}
}
