package fs

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog"
)

// windowDir is @offset/ or @time/: every name is resolved when looked up.
type windowDir struct {
	fixedDir
	byTime bool
}

// Readdir lists nothing (docs/spec.md §2): a tree walk reaches every record once,
// through log and log.jsonl, and not once more per segment.
func (d *windowDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream(nil), 0
}

func (d *windowDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	lg := d.p.lg.WithField("file", name)
	defer d.p.fsys.observe("lookup", time.Now(), &errno)
	defer guard(lg, "lookup", &errno)
	k, spec := position.Plain, name
	if s, ok := strings.CutSuffix(name, ".jsonl"); ok {
		k, spec = position.JSON, s
	}
	l, ly := d.p.in(ctx)
	v, first, err := d.resolve(l, ly, k, spec)
	if err != nil {
		return nil, fail(lg, "lookup", err)
	}
	v.lg = lg
	ch := d.GetChild(name)
	if old, ok := opsOf(ch).(*viewNode); !ok || !old.sameWindow(v) {
		ch = d.NewInode(ctx, v, gofs.StableAttr{Mode: syscall.S_IFREG})
	} else {
		v = old
	}
	if first != nil {
		d.p.firsts.add(v, first)
	}
	fillEntry(ctx, ch, out)
	volatile(out)
	out.SetAttrTimeout(windowAttrTimeout)
	return ch, 0
}

// windowAttrTimeout is how long the kernel may keep the attributes a
// window's lookup gave, as long as it keeps the name itself (volatile: one
// clock tick): the open that follows the lookup in the same path walk
// then asks for no GETATTR for its permission check (a round trip of the
// four `head -1 @offset/N` made), while any later stat, the first polls of
// `tail -f` included, asks again (a window's getattr gives no timeout).
const windowAttrTimeout = time.Nanosecond

// sameWindow reports that w is the window n is: the kernel asks again for
// a name it knows (its entry timed out) and keeps its inode only when the
// answer is that inode; a new one makes it look the name up once more.
func (n *viewNode) sameWindow(w *viewNode) bool {
	return n.k == w.k && n.startOff == w.startOff && n.startPos == w.startPos &&
		n.rangeEnd == w.rangeEnd && n.rangeLen == w.rangeLen
}

// resolve turns "A", "A..B" (offsets or times) into a window node and
// the rendering of its first bytes, if its placing made one, asking l and
// ly (the partition and its layout, bound to the request).
func (d *windowDir) resolve(l partlog.Log, ly *position.Layout, k position.Kind, spec string) (*viewNode, *firstChunk, error) {
	a, b, isRange := strings.Cut(spec, "..")
	from, err := d.point(l, a)
	if err != nil {
		return nil, nil, err
	}
	v := &viewNode{p: d.p, k: k, startOff: from, rangeEnd: -1}
	to := int64(-1)
	if isRange {
		if to, err = d.point(l, b); err != nil {
			return nil, nil, err
		}
		if !d.byTime && to < from {
			return nil, nil, fmt.Errorf("range %q ends before it starts: %w", spec, partlog.ErrInvalid)
		}
		to = max(to, from)
	}
	first, err := d.place(l, ly, v, to)
	return v, first, err
}

// point resolves one offset or time to an offset in [start, end].
func (d *windowDir) point(l partlog.Log, s string) (int64, error) {
	if d.byTime {
		ts, err := parseTime(s, d.p.fsys.opt.Now())
		if err != nil {
			return 0, err
		}
		return l.OffsetForTime(ts)
	}
	switch s {
	case "earliest":
		return l.StartOffset(), nil
	case "latest":
		return l.EndOffset(), nil
	}
	n, err := parseDecimal(s)
	if err != nil {
		return 0, fmt.Errorf("offset %q: %w", s, partlog.ErrInvalid)
	}
	if n < l.StartOffset() || n > l.EndOffset() {
		return 0, fmt.Errorf("offset %d outside [%d, %d]: %w", n, l.StartOffset(), l.EndOffset(), partlog.ErrNotFound)
	}
	return n, nil
}

// place computes the window's start position and, for a range ending at
// offset to, its exact size. The read that finds the start position also
// renders the window's first bytes: they are returned, if any.
func (d *windowDir) place(l partlog.Log, ly *position.Layout, v *viewNode, to int64) (*firstChunk, error) {
	changed := l.Changed()
	c := newChunk(firstRender)
	w := &position.Renderer{K: v.k, Cur: &position.Cursor{Off: v.startOff}, O: &position.RenderOut{Dec: ly.Decoder(), Dst: *c.buf}}
	err := ly.WithSync(func() error {
		w.Limit = to
		if to < 0 {
			w.Limit = ly.LastNext()
		}
		var err error
		v.startPos, err = ly.PosRendering(v.k, v.startOff, w)
		if err == nil && to >= 0 {
			var endPos int64
			endPos, err = ly.PosOf(v.k, to)
			v.rangeEnd, v.rangeLen = to, max(endPos-v.startPos, 0)
		}
		return err
	})
	if err != nil || w.O.N == 0 {
		c.unref()
		return nil, err
	}
	c.data, c.cur = w.O.Dst[:w.O.N], *w.Cur
	return &firstChunk{c: c, seg: w.Seg, limit: w.Limit, changed: changed}, nil
}

// parseDecimal accepts only digits (no sign, exponent or spaces).
func parseDecimal(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

// parseTime reads docs/spec.md §2's <T>: epoch ms, RFC 3339, earliest, latest,
// max, or a negative duration relative to now (Go durations plus d).
func parseTime(s string, now time.Time) (int64, error) {
	switch s {
	case "earliest":
		return partlog.Earliest, nil
	case "latest":
		return partlog.Latest, nil
	case "max":
		return partlog.MaxTimestamp, nil
	}
	if ms, err := parseDecimal(s); err == nil {
		return ms, nil
	}
	if rel, ok := strings.CutPrefix(s, "-"); ok {
		d, err := parseDuration(rel)
		if err != nil {
			return 0, fmt.Errorf("time %q: %w", s, partlog.ErrInvalid)
		}
		return now.Add(-d).UnixMilli(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("time %q: %w", s, partlog.ErrInvalid)
	}
	return t.UnixMilli(), nil
}

// parseDuration is time.ParseDuration with a leading days term ("2d",
// "1d12h").
func parseDuration(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := parseDecimal(s[:i])
		if err != nil || n > math.MaxInt64/int64(24*time.Hour) {
			return 0, fmt.Errorf("duration %q: %w", s, strconv.ErrSyntax) // as time.ParseDuration's overflow
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > math.MaxInt64-days || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("duration %q: %w", s, strconv.ErrSyntax)
	}
	return days + d, nil
}
