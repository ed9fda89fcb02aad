package position

import (
	"fmt"
	"slices"
)

// Check compares the bookkeeping ly's appends kept with what a scan of its
// log computes afresh (Rescan): lengths, checkpoints, starts. Besides the
// scan's checkpoints, appends may keep others at batch starts (batchCkpt),
// each at the position the scan gives its record. It returns the first
// difference.
func (ly *Layout) Check() error {
	got, err := ly.scanAll()
	if err != nil {
		return err
	}
	fresh := ly.Rescan()
	want, err := fresh.scanAll()
	if err != nil {
		return err
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d segments, scan has %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.start != w.start || g.next != w.next || g.length != w.length || g.lastCk != w.lastCk {
			return fmt.Errorf("segment %d: appends kept start %v next %d length %v lastCk %v; scan: %v %d %v %v",
				w.base, g.start, g.next, g.length, g.lastCk, w.start, w.next, w.length, w.lastCk)
		}
		var scanned []Ckpt
		for _, c := range g.ckpts {
			if slices.Contains(w.ckpts, c) {
				scanned = append(scanned, c)
				continue
			}
			pos, err := fresh.PosBoth(c.Off)
			if err != nil {
				return err
			}
			if pos != [2]int64{g.start[0] + c.pos[0], g.start[1] + c.pos[1]} {
				return fmt.Errorf("segment %d: appends kept a checkpoint %v, the scan places record %d at %v", w.base, c, c.Off, pos)
			}
		}
		if !slices.Equal(scanned, w.ckpts) {
			return fmt.Errorf("segment %d: appends kept checkpoints %v\nscan: %v", w.base, g.ckpts, w.ckpts)
		}
	}
	return nil
}

// Rescan returns a layout of ly's log without bookkeeping: it computes
// every position by reading the records again.
func (ly *Layout) Rescan() *Layout {
	return &Layout{layoutState: &layoutState{lg: ly.lg, dec: ly.dec}, log: ly.log}
}

// PosBoth returns where ly places record off in both streams.
func (ly *Layout) PosBoth(off int64) (pos [2]int64, err error) {
	err = ly.WithSync(func() error {
		for k := range pos {
			var err error
			if pos[k], err = ly.PosOf(Kind(k), off); err != nil {
				return err
			}
		}
		return nil
	})
	return pos, err
}

// scanAll scans every segment to its end and returns the segments'
// bookkeeping.
func (ly *Layout) scanAll() (segs []*SegInfo, err error) {
	err = ly.WithSync(func() error {
		for _, s := range ly.segs {
			if err := ly.scan(s, s.snap.Next); err != nil {
				return err
			}
		}
		segs = ly.segs
		return nil
	})
	return segs, err
}
