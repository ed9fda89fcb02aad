package kafkalog

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/internal/varints"
)

// The tiles' prints (marks, batch headers and generations) are kept in
// the cache directory beside the sidecars, as the cache file
// <topic>-<partition>.tile-prints (framed as a sidecar is: topic ID and
// a CRC that covers the partition), so that a remount knows which tiles it has seen and fs keeps
// what it rendered of them. Format, after printsMagic (varints, signed
// unless noted):
//
//	epoch end uvarint(nwin) { base lo uvarint(gen)
//	  uvarint(nmarks) { upto uvarint(sum) }
//	  uvarint(nheads) { base last uvarint(crc) } }
//
// epoch is the largest partition leader epoch of the batches printed, end
// the offset after the last of them. The file is derived data: it is
// trusted only after the cluster confirmed, at the first look at the
// partition, that its log still holds that history (OffsetForLeaderEpoch
// answers an end of epoch at or past end, as a consumer checks for
// truncation) and, tile by tile, that the tile's records still
// begin at lo and reach past what its marks cover. Anything else drops the
// prints concerned, with a log line.
const (
	printsName  = "tile-prints"
	printsMagic = "pfkw1\n"
)

var errPrints = errors.New("malformed tile prints")

// tilePrint is what is kept of a tile's prints across a remount.
type tilePrint struct {
	base, lo int64
	gen      int64
	marks    []mark
	heads    []head
}

// reach is the offset after the last batch a tile's prints cover.
func (w *tilePrint) reach() int64 {
	r := w.lo
	for _, m := range w.marks {
		r = max(r, m.upto)
	}
	if n := len(w.heads); n > 0 {
		r = max(r, w.heads[n-1].last+1)
	}
	return r
}

func encodePrints(epoch int32, end int64, ws []tilePrint) []byte {
	b := []byte(printsMagic)
	b = binary.AppendVarint(b, int64(epoch))
	b = binary.AppendVarint(b, end)
	b = binary.AppendUvarint(b, uint64(len(ws)))
	for _, w := range ws {
		b = binary.AppendVarint(b, w.base)
		b = binary.AppendVarint(b, w.lo)
		b = binary.AppendUvarint(b, uint64(w.gen))
		b = binary.AppendUvarint(b, uint64(len(w.marks)))
		for _, m := range w.marks {
			b = binary.AppendVarint(b, m.upto)
			b = binary.AppendUvarint(b, m.sum)
		}
		b = binary.AppendUvarint(b, uint64(len(w.heads)))
		for _, h := range w.heads {
			b = binary.AppendVarint(b, h.base)
			b = binary.AppendVarint(b, h.last)
			b = binary.AppendUvarint(b, uint64(h.crc))
		}
	}
	return b
}

// decodePrints parses a prints file; tiles come by increasing base, each
// tile's heads by increasing offset, its marks and heads inside it.
func decodePrints(b []byte) (epoch int32, end int64, ws []tilePrint, err error) {
	if len(b) < len(printsMagic) || string(b[:len(printsMagic)]) != printsMagic {
		return 0, 0, nil, errPrints
	}
	r := varints.NewReader(b[len(printsMagic):], errPrints)
	e := r.Varint()
	end = r.Varint()
	n := r.Count()
	for i := 0; i < n && r.Err == nil; i++ {
		w := tilePrint{base: r.Varint(), lo: r.Varint(), gen: int64(r.Uvarint() & (1<<62 - 1))}
		for j, nm := 0, r.Count(); j < nm && r.Err == nil; j++ {
			w.marks = append(w.marks, mark{upto: r.Varint(), sum: r.Uvarint()})
		}
		for j, nh := 0, r.Count(); j < nh && r.Err == nil; j++ {
			w.heads = append(w.heads, head{base: r.Varint(), last: r.Varint(), crc: uint32(r.Uvarint())})
		}
		if r.Err == nil && !w.sound(ws) {
			r.Fail()
		}
		ws = append(ws, w)
	}
	if r.Err == nil && (e < -1 || e > 1<<31-1 || r.Len() != 0) {
		r.Fail()
	}
	if r.Err != nil {
		return 0, 0, nil, r.Err
	}
	return int32(e), end, ws, nil
}

// sound checks a decoded tile against its own rules and those before it.
func (w *tilePrint) sound(before []tilePrint) bool {
	if w.base < 0 || w.base%TileOffsets != 0 || w.lo < w.base || w.lo >= w.base+TileOffsets || len(w.marks) > maxMarks {
		return false
	}
	if n := len(before); n > 0 && before[n-1].base >= w.base {
		return false
	}
	for _, m := range w.marks { // in the order reads made them
		if m.upto <= w.lo || m.upto > w.base+TileOffsets+1<<31 {
			return false
		}
	}
	at := w.lo
	for _, h := range w.heads {
		if h.last < h.base || h.last < at || h.base >= w.base+TileOffsets || h.last-h.base > 1<<31 {
			return false
		}
		at = h.last + 1
	}
	return true
}

// loadPrints restores the prints kept by an earlier mount, once, before
// the first snapshot of offsets the cluster told: only what the cluster
// confirms (see printsName), with start and end the offsets it has now.
func (l *Log) loadPrints(start, end int64) {
	// a concurrent first look waits: its snapshot must have the stamps
	l.printsOnce.Do(func() { l.loadPrintsOnce(start, end) })
}

func (l *Log) loadPrintsOnce(start, end int64) {
	path := l.sidecarName(printsName)
	b, err := l.readCache(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err == nil {
		b, err = unframeCache(l.topicID(), l.part, b)
	}
	var ws []tilePrint
	var epoch int32
	var seen int64
	if err == nil {
		epoch, seen, ws, err = decodePrints(b)
	}
	if err == nil {
		ws, err = l.confirmPrints(epoch, seen, start, end, ws)
	}
	lg := l.s.opt.Logger.WithField("file", path)
	if err != nil {
		lg.WithError(err).Warn("tile prints discarded")
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range ws {
		l.gens[w.base] = max(l.gens[w.base], w.gen)
		if len(w.marks) > 0 {
			l.marks[w.base], l.printLo[w.base] = w.marks, w.lo
		}
		if len(w.heads) > 0 {
			l.keepHeads(w.base, w.heads)
		}
	}
	l.epoch, l.epochEnd = epoch, seen
	l.gen++
}

// confirmPrints keeps the tiles whose prints the cluster's log still
// holds: none when the log no longer holds the history they were made of
// (another leader's truncation: the epoch ends before seen, or is
// unknown), and of the rest those whose records still begin at lo (the
// log start offset did not move into them) and end no earlier than their
// prints reach.
func (l *Log) confirmPrints(epoch int32, seen, start, end int64, ws []tilePrint) ([]tilePrint, error) {
	if end < seen {
		return nil, fmt.Errorf("the log ends at offset %d, before the %d its prints saw", end, seen)
	}
	if epoch >= 0 {
		var got int64
		var gotEpoch int32
		err := l.call(l.where(""), "offset for leader epoch", func(ctx context.Context) error {
			var err error
			gotEpoch, got, err = l.askEpochEnd(ctx, epoch)
			return err
		})
		switch {
		case err != nil:
			return nil, fmt.Errorf("not confirmed: %w", err)
		case gotEpoch < 0 || got < 0:
			return nil, fmt.Errorf("the cluster does not know leader epoch %d of the prints", epoch)
		case got < seen:
			return nil, fmt.Errorf("leader epoch %d ends at offset %d, before the %d its prints saw (the log was truncated)", epoch, got, seen)
		}
	}
	kept := ws[:0]
	for _, w := range ws {
		if max(w.base, start) == w.lo && w.reach() <= end {
			kept = append(kept, w)
		}
	}
	return kept, nil
}

// askEpochEnd asks the partition's leader where leader epoch e ends
// (OffsetForLeaderEpoch): the epoch it answers for (the largest at most e
// it knows, -1 if none) and its end offset.
func (l *Log) askEpochEnd(ctx context.Context, e int32) (int32, int64, error) {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = l.topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = l.part, -1, e
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	for try := 0; ; try++ {
		resp, err := req.RequestWith(ctx, l.s.cl)
		if err != nil {
			return 0, 0, err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, 0, errors.New("offset for leader epoch: answer without the partition")
		}
		p := resp.Topics[0].Partitions[0]
		err = kerr.ErrorForCode(p.ErrorCode)
		if err == nil {
			return p.LeaderEpoch, p.EndOffset, nil
		}
		if !retriable(err) {
			return 0, 0, err
		}
		if err := pause(ctx, try); err != nil {
			return 0, 0, err
		}
	}
}

// savePrints writes the tiles' prints to the cache directory when they
// changed since the last save.
func (l *Log) savePrints() error {
	l.mu.Lock()
	if !l.printsDirty {
		l.mu.Unlock()
		return nil
	}
	var ws []tilePrint
	for base := range l.marks {
		ws = append(ws, tilePrint{base: base, lo: l.printLo[base], gen: l.gens[base], marks: l.marks[base], heads: l.heads[base]})
	}
	epoch, seen := l.epoch, l.epochEnd
	l.printsDirty = false
	l.mu.Unlock()
	slices.SortFunc(ws, func(a, b tilePrint) int { return cmp.Compare(a.base, b.base) })
	if err := l.saveCache(printsName, encodePrints(epoch, seen, ws)); err != nil {
		l.mu.Lock()
		l.printsDirty = true
		l.mu.Unlock()
		return err
	}
	return nil
}
