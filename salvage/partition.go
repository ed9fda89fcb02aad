package salvage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/progress"
	"github.com/partfs/partfs/record"
)

// copier copies one partition's segments.
type copier struct {
	res     *Result
	opt     Options
	dec     record.Decoder
	next    int64 // the offset after the last batch kept; -1 before the first
	pending []int // indexes into res.Skips waiting for the next kept offset
}

func copyPartition(src, dst, name string, res *Result, opt Options, pr *progress.Reporter) error {
	segs, err := segments(filepath.Join(src, name))
	if err != nil {
		return err
	}
	out := filepath.Join(dst, name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, f := range []string{kafkaname.PartitionMetadataFile, kafkaname.LeaderEpochFile} {
		if err := copyRegular(filepath.Join(src, name, f), filepath.Join(out, f)); err != nil {
			return err
		}
	}
	c := &copier{res: res, opt: opt, next: -1}
	for i, s := range segs {
		nextBase := int64(-1)
		if i+1 < len(segs) {
			nextBase = segs[i+1].base
		}
		if err := c.segment(s, nextBase, out); err != nil {
			return err
		}
		if pr != nil {
			pr.Add(s.size)
		}
	}
	c.resolve(-1)
	return nil
}

// segment copies the batches of s worth keeping to out.
func (c *copier) segment(s segFile, nextBase int64, out string) error {
	if s.refuse != "" {
		c.skip(Skip{File: s.path, Reason: s.refuse}, s.base)
		return nil
	}
	b, err := readNoFollow(s.path)
	if err != nil {
		return err
	}
	kept, batches := c.keep(b, s, nextBase)
	if batches == 0 {
		return nil
	}
	c.res.Segments++
	c.res.Batches += batches
	return os.WriteFile(filepath.Join(out, filepath.Base(s.path)), kept, 0o644)
}

// keep returns the batches of segment s's bytes b worth keeping, noting
// the regions it skips.
func (c *copier) keep(b []byte, s segFile, nextBase int64) (kept []byte, batches int) {
	for pos := int64(0); pos < int64(len(b)); {
		bt, n, why := c.check(b, pos, s, nextBase)
		if bt != nil {
			c.resolve(bt.Header.BaseOffset)
			c.next = bt.Header.LastOffset() + 1
			c.res.Records += n
			kept = append(kept, bt.Raw...)
			batches++
			pos += int64(len(bt.Raw))
			continue
		}
		to := c.resync(b, pos+1, s, nextBase)
		c.skip(Skip{File: s.path, From: pos, To: to, Reason: why}, s.base)
		pos = to
	}
	return kept, batches
}

// check returns the batch at pos and its record count if salvage keeps
// it: whole, CRC valid, records decoding, offsets above the last kept and
// inside the segment; else why not.
func (c *copier) check(b []byte, pos int64, s segFile, nextBase int64) (*record.Batch, int, string) {
	sc := record.NewScanner(bytes.NewReader(b), pos, int64(len(b)), s.path)
	if !sc.Next() {
		if err := sc.Err(); err != nil {
			return nil, 0, strings.TrimPrefix(err.Error(), s.path+": ")
		}
		return nil, 0, "no batch"
	}
	bt := sc.Batch()
	h := &bt.Header
	if c.next >= 0 && h.BaseOffset < c.next {
		return nil, 0, fmt.Sprintf("batch offsets %d..%d not above the last kept %d", h.BaseOffset, h.LastOffset(), c.next-1)
	}
	if !fits(h.BaseOffset, h.LastOffset(), s.base, nextBase) {
		return nil, 0, fmt.Sprintf("batch offsets %d..%d outside the segment", h.BaseOffset, h.LastOffset())
	}
	n := 0
	if err := c.dec.Records(bt, func(*record.Record) bool { n++; return true }); err != nil {
		return nil, 0, strings.TrimPrefix(err.Error(), s.path+": ")
	}
	return bt, n, ""
}

// resync returns the first position from pos on where a batch salvage
// keeps starts, or the end of b. A candidate is only parsed where its
// magic byte and size field are plausible.
func (c *copier) resync(b []byte, pos int64, s segFile, nextBase int64) int64 {
	for ; pos+record.LogOverhead+14 <= int64(len(b)); pos++ {
		if b[pos+16] > 2 {
			continue
		}
		size := int64(int32(binary.BigEndian.Uint32(b[pos+8:])))
		if size < 14 || pos+record.LogOverhead+size > int64(len(b)) {
			continue
		}
		if bt, _, _ := c.check(b, pos, s, nextBase); bt != nil {
			return pos
		}
	}
	return int64(len(b))
}

// skip records a skipped region; its lost offsets end where the next kept
// batch starts.
func (c *copier) skip(s Skip, segBase int64) {
	s.FirstLost = max(c.next, segBase)
	c.res.Skips = append(c.res.Skips, s)
	c.pending = append(c.pending, len(c.res.Skips)-1)
}

// resolve gives the pending skips the offset of the next kept batch (-1:
// none) and reports them.
func (c *copier) resolve(next int64) {
	for _, i := range c.pending {
		c.res.Skips[i].NextKept = next
		if c.opt.Report != nil {
			fmt.Fprintln(c.opt.Report, c.res.Skips[i].String())
		}
	}
	c.pending = c.pending[:0]
}

// readNoFollow reads a regular file without following a link.
func readNoFollow(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.ReadFile(path)
}
