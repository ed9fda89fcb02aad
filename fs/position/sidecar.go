package position

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/partfs/partfs/internal/varints"
	"github.com/partfs/partfs/partlog"
)

// SidecarName is the per-partition file that keeps the position
// bookkeeping across mounts. Format (all varints, signed unless noted):
//
//	"pfpos3\n" uvarint(nsegs) { base uvarint(stamp) start[0] start[1]
//	  next size length[0] length[1] uvarint(nckpts) { off pos[0] pos[1] } }
//
// Segment IDs do not survive a remount; a loaded entry is matched to a
// segment by base, and its rendering trusted while the segment has the
// same nonzero stamp and is at least as long (partlog's Reopen rule). Of
// a partlog.RewritesUnseen log only the starts are kept, and the rendering
// of segments with a stamp (which its Reads check). A "pfpos2\n"
// sidecar is the same without stamps: its starts are kept.
const (
	SidecarName  = "fs-positions"
	sidecarMagic = "pfpos3\n"
	oldMagic     = "pfpos2\n"
)

func encodeSidecar(segs []*SegInfo) []byte {
	b := []byte(sidecarMagic)
	b = binary.AppendUvarint(b, uint64(len(segs)))
	for _, s := range segs {
		b = binary.AppendVarint(b, s.base)
		b = binary.AppendUvarint(b, s.stamp)
		for _, v := range []int64{s.start[0], s.start[1], s.next, s.size, s.length[0], s.length[1]} {
			b = binary.AppendVarint(b, v)
		}
		b = binary.AppendUvarint(b, uint64(len(s.ckpts)))
		for _, c := range s.ckpts {
			b = binary.AppendVarint(b, c.Off)
			b = binary.AppendVarint(b, c.pos[0])
			b = binary.AppendVarint(b, c.pos[1])
		}
	}
	return b
}

var errSidecar = errors.New("malformed position sidecar")

func decodeSidecar(b []byte) ([]*SegInfo, error) {
	stamped := bytes.HasPrefix(b, []byte(sidecarMagic))
	if !stamped && !bytes.HasPrefix(b, []byte(oldMagic)) {
		return nil, errSidecar
	}
	r := varints.NewReader(b[len(sidecarMagic):], errSidecar)
	n := r.Count()
	segs := make([]*SegInfo, 0, n)
	for i := 0; i < n && r.Err == nil; i++ {
		s := &SegInfo{base: r.Varint()}
		if stamped {
			s.stamp = r.Uvarint()
		}
		s.start = [2]int64{r.Varint(), r.Varint()}
		s.next, s.size = r.Varint(), r.Varint()
		s.length = [2]int64{r.Varint(), r.Varint()}
		nc := r.Count()
		for j := 0; j < nc && r.Err == nil; j++ {
			s.ckpts = append(s.ckpts, Ckpt{Off: r.Varint(), pos: [2]int64{r.Varint(), r.Varint()}})
		}
		if len(s.ckpts) > 0 {
			s.lastCk = s.ckpts[len(s.ckpts)-1].pos
		}
		if len(segs) > 0 && segs[len(segs)-1].base >= s.base {
			return nil, errSidecar // the layout keeps segments by base
		}
		segs = append(segs, s)
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return segs, nil
}

// decodedSidecarName keeps the bookkeeping of a mount that decodes
// schema-encoded payloads (its renderings differ where records carry
// them), in the same format.
const decodedSidecarName = "fs-positions-decoded"

func (ly *Layout) sidecarName() string {
	if ly.dec != nil {
		return decodedSidecarName
	}
	return SidecarName
}

// load restores the bookkeeping from the sidecar, if any.
func (ly *Layout) load() {
	b, err := ly.log.LoadSidecar(ly.sidecarName())
	if errors.Is(err, partlog.ErrNotFound) {
		return
	}
	if err == nil {
		var segs []*SegInfo
		if segs, err = decodeSidecar(b); err == nil {
			if ru, ok := ly.log.(partlog.RewritesUnseen); ok && ru.UnseenRewrites() {
				for _, s := range segs {
					if s.stamp == 0 {
						s.resetContent() // the starts stand; the records are rendered again
					}
				}
			}
			ly.segs = segs
			return
		}
	}
	ly.lg.WithError(err).WithField("file", ly.sidecarName()).Warn("position sidecar unusable; recomputing positions")
}

// Save writes the sidecar if anything changed since the last save. The
// log is synced first, before the layout's lock is taken (an fsync may
// take long, and readers and writers need the lock): the sidecar is
// durable, so the records it places must be too, or a power loss could
// cut the log below them and records appended after recovery would take
// positions the sidecar gives others. Records appended between the sync
// and the snapshot are placed unsynced.
func (ly *Layout) Save() error {
	if !ly.Dirty() {
		return nil
	}
	if err := ly.log.Sync(); err != nil && !errors.Is(err, partlog.ErrReadOnly) {
		return fmt.Errorf("sync %s-%d before saving %s: %w", ly.log.Topic(), ly.log.Partition(), ly.sidecarName(), err)
	}
	return ly.save(ly.log.SaveSidecar)
}

// SaveSynced is Save for a log whose records were made durable just
// before, with every other partition's (partlog.BulkSyncer's SyncAll):
// it syncs nothing, and writes the sidecar without a sync where the log
// is a partlog.SidecarWriter, for the store's next SyncAll to make
// durable.
func (ly *Layout) SaveSynced() error {
	if !ly.Dirty() {
		return nil
	}
	write := ly.log.SaveSidecar
	if w, ok := ly.log.(partlog.SidecarWriter); ok {
		write = w.WriteSidecar
	}
	return ly.save(write)
}

// Dirty reports whether the sidecar is out of date.
func (ly *Layout) Dirty() bool {
	ly.mu.Lock()
	defer ly.mu.Unlock()
	return ly.dirty
}

// save writes the sidecar of the layout as it is now with write.
func (ly *Layout) save(write func(name string, data []byte) error) error {
	ly.mu.Lock()
	defer ly.mu.Unlock()
	release, err := ly.sync()
	release()
	if err != nil {
		return err
	}
	if _, err := ly.End(Plain); err != nil {
		return err
	}
	if err := write(ly.sidecarName(), encodeSidecar(ly.segs)); errors.Is(err, partlog.ErrReadOnly) {
		ly.dirty = false // a partition the store never writes (a KRaft metadata log)
		return nil
	} else if err != nil {
		return fmt.Errorf("save %s of %s-%d: %w", ly.sidecarName(), ly.log.Topic(), ly.log.Partition(), err)
	}
	ly.dirty = false
	return nil
}
