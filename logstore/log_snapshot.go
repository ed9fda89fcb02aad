package logstore

import (
	"fmt"
	"sort"
	"sync"

	"github.com/partfs/partfs/partlog"
)

// Segments returns a snapshot of the live segment list, oldest first. Each
// segment's files stay open until release is called (once; later calls do
// nothing).
func (l *Log) Segments() ([]partlog.Segment, func()) {
	l.mu.Lock()
	held := make([]*segment, len(l.segs))
	copy(held, l.segs)
	metas := make([]partlog.Segment, len(held))
	for i, s := range held {
		s.acquire()
		metas[i] = s.meta()
	}
	l.mu.Unlock()
	var once sync.Once
	return metas, func() { once.Do(func() { l.releaseAll(held) }) }
}

// releaseAll drops one reference of each segment, forgetting the ones that
// are gone.
func (l *Log) releaseAll(held []*segment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range held {
		if s.refs.Add(-1) == 0 {
			delete(l.byID, s.id)
			s.closeFiles()
		}
	}
}

// retire takes a segment out of the live list's reference. REQUIRES: mu held.
func (l *Log) retire(s *segment) {
	s.dead = true
	if s.refs.Add(-1) == 0 {
		delete(l.byID, s.id)
		s.closeFiles()
	}
}

// segmentByID finds a live or snapshot-held segment.
func (l *Log) segmentByID(seg partlog.Segment) (*segment, error) {
	l.mu.Lock()
	s, ok := l.byID[seg.ID]
	if ok {
		s.acquire()
	}
	l.mu.Unlock()
	if !ok || s.base != seg.Base {
		if ok {
			l.releaseAll([]*segment{s})
		}
		return nil, fmt.Errorf("segment %d (id %d) of %s is gone: %w", seg.Base, seg.ID, l.dir, partlog.ErrNotFound)
	}
	return s, nil
}

// floorSegment returns the index of the last live segment whose base <=
// offset (0 if none). REQUIRES: mu held.
func (l *Log) floorSegment(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset })
	if i == 0 {
		return 0
	}
	return i - 1
}
