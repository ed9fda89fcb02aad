package fs

import (
	"sync"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/record"
)

// decodedName is the view of an internal topic's partition with keys and
// values decoded (internaltopic.Topic.AppendJSON, one object per line).
const decodedName = "decoded.jsonl"

// decodedView renders decoded.jsonl. The rendering is kept in memory and
// extended as records arrive; when retention or compaction changes the
// partition it is rendered again (these topics are compacted and small).
type decodedView struct {
	topic internaltopic.Topic
	mu    sync.Mutex
	t     position.Tailer
	buf   []byte // REQUIRES: mu held; bytes below len are never changed
}

// content returns the rendering as of now. The bytes returned stay valid
// and unchanged.
func (v *decodedView) content() ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	err := v.t.Update(func() { v.buf = nil }, func(r *record.Record) {
		v.buf = append(v.topic.AppendJSON(v.buf, r), '\n')
	})
	return v.buf[:len(v.buf):len(v.buf)], err
}

// decoded returns the partition's decoded view, or nil when it is not an
// internal topic's.
func (p *part) decoded() *decodedView {
	t := internaltopic.ForTopic(p.log.Topic())
	if t == internaltopic.None {
		return nil
	}
	p.decodedOnce.Do(func() { p.dec = &decodedView{topic: t, t: position.NewTailer(p.log)} })
	return p.dec
}
