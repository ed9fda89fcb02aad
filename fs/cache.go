package fs

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/partfs/partfs/fs/position"
)

// readAhead is the kernel's read-ahead on a mount: one request of the
// largest size the kernel allows by default (max_pages_limit 256 pages).
const readAhead = 1 << 20

// raiseReadAhead sets the read-ahead of the mount on dir to readAhead:
// the kernel starts a FUSE mount at 128 KiB whatever the mount asks for
// (its backing device's read_ahead_kb), so a cached reader would cost
// eight requests per MiB. It needs root; without it the default stays.
func raiseReadAhead(dir string, lg *logrus.Entry) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		lg.WithError(err).Debug("read-ahead left at the kernel's default")
		return
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	if err := os.WriteFile(p, []byte(strconv.Itoa(readAhead>>10)), 0); err != nil {
		lg.WithError(err).Debug("read-ahead left at the kernel's default")
	}
}

// pageMask masks the offset within a page of the kernel's cache.
var pageMask = int64(os.Getpagesize()) - 1

// viewCache is what the kernel may keep of a view's pages. Only `log` and
// `log.jsonl` are ever cached, and an open only while the stream has no
// gap (layout.gapless): then every position holds the same bytes
// whichever open reads it, and an append only adds bytes after the end.
// Compaction and retention leave a gap where they change bytes (docs/spec.md §3),
// so from the first open that sees one on, the view is read with direct
// I/O (no open reads the cache again; the first such open without cached
// readers lets the kernel drop it); cached opens already running finish on
// the pages they have, as a reader does with what was rendered ahead for
// it.
//
// One open at a time reads through the cache (a re-read after a read is
// served from it); an open made while another one does reads with direct
// I/O. With two cached readers the kernel acts on the pages of one while
// it answers the other: a page one has in hand is copied out after the
// other raised the size past its zeros. A cached read whose position
// retention or compaction emptied fails (errRemoved).
//
// Only a read-only mount caches (the view's node sets off otherwise): a
// write through the kernel adds what it returns to the kernel's st_size,
// which then runs past the file's end where the daemon holds a partial
// line or renders a log.jsonl line shorter than written, and a cached read
// ending there gets the rest of its page filled with zeros by the kernel.
// A read-only mount's views grow only by what others append to the data
// directory, which the kernel learns from a stat (grown).
//
// The mount controls the kernel's data cache explicitly (go-fuse
// ExplicitDataCacheControl): a larger st_size does not drop the cache, so
// growing files keep their pages. What the kernel holds beyond the old end
// is handled here: the kernel fills the tail of the page a short read
// ended in with zeros, which become stale once the file grows; each size
// reported larger than such an end (Getattr) drops the pages from there
// on, after the new bytes are readable.
type viewCache struct {
	mu      sync.Mutex
	off     bool  // a gap was seen: never cached again
	opens   int   // cached opens not yet released
	used    bool  // the kernel may hold pages
	low     int64 // lowest end of a short read since the last drop began (MaxInt64: none)
	clean   int64 // the size of the last drop that finished: no page below it holds zeros
	reading int   // cached reads running
	readLow int64 // lowest position of the reads running, if any

	dropping sync.Mutex // held by grown during a drop
}

// openFlags returns the open flags of a view's open, whether the open
// reads through the kernel's cache (then release it with closed), and
// whether the caller must drop what the kernel keeps of the file (pages
// of a view with a gap that no cached open reads any more: a private
// mmap reads them even through a direct-I/O open). candidate: a read-only
// open of log or log.jsonl; gapless: its stream has no gap now (only
// asked of candidates).
func (c *viewCache) openFlags(candidate bool, gapless func() bool) (flags uint32, cached, drop bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if candidate && !c.off && !gapless() {
		c.off = true
	}
	if !candidate || c.off || c.opens > 0 {
		if c.off && c.opens == 0 {
			drop, c.used = c.used, false
		}
		return fuse.FOPEN_DIRECT_IO | fuse.FOPEN_KEEP_CACHE, false, drop
	}
	if !c.used {
		c.used, c.low, c.clean = true, math.MaxInt64, 0
	}
	c.opens++
	return fuse.FOPEN_KEEP_CACHE, true, false
}

// direct makes every later open of the view use direct I/O.
func (c *viewCache) direct() {
	c.mu.Lock()
	c.off = true
	c.mu.Unlock()
}

// uncache follows a failed cached read: what was rendered ahead is
// dropped (the next read finds its cursor again) and later opens of
// the view read with direct I/O, which delivers the bytes before a
// failure and the error after them. REQUIRES: mu held.
func (h *viewHandle) uncache() {
	h.dropAhead()
	h.nextPos = -1
	h.n.cache.direct()
}

// errRemoved fails a cached read of a position whose records retention or
// compaction removed (viewHandle.Read): the bytes the kernel would cache
// there are not the ones its other pages hold; reopening reads on with
// direct I/O.
var errRemoved = errors.New("records at this position of a cached open were removed; reopen to read on")

// closed releases a cached open.
func (c *viewCache) closed() {
	c.mu.Lock()
	c.opens--
	c.mu.Unlock()
}

// readStarted notes a cached read at off, running until readDone: it may
// end short anywhere from off on, unknown to grown until it is done.
func (c *viewCache) readStarted(off int64) {
	c.mu.Lock()
	if c.reading == 0 || off < c.readLow {
		c.readLow = off
	}
	c.reading++
	c.mu.Unlock()
}

// readDone ends a cached read; end is where it ended before its request
// did, or -1 if it did not.
func (c *viewCache) readDone(end int64) {
	c.mu.Lock()
	if end >= 0 {
		c.low = min(c.low, end)
	}
	c.reading--
	c.mu.Unlock()
}

// grown drops the pages from the lowest short read's page on when size,
// about to be reported to the kernel, exceeds it; a read still running
// counts as short from its position. Call it after open handles read up
// to size (viewNode.seen): a read the kernel has sent by then is waited
// for and dropped, a later one reads the new bytes. It returns once no
// page below size holds zeros: a stat that reports a size while another
// one's drop is still running waits for that drop, as the kernel takes
// the size from whichever reply comes first.
//
// size itself then counts as a short read's end: the kernel zeroes its
// page of a new size from that size on (it truncates its cache to the
// size even when the size grows), over bytes a read past it brought.
func (c *viewCache) grown(ino *gofs.Inode, size int64) {
	if c.below(size) {
		c.drop(ino, size)
	}
	c.mu.Lock()
	c.low = min(c.low, size)
	c.mu.Unlock()
}

// drop is grown's drop, one at a time.
func (c *viewCache) drop(ino *gofs.Inode, size int64) {
	c.dropping.Lock()
	defer c.dropping.Unlock()
	c.mu.Lock()
	low := c.low
	if c.reading > 0 {
		low = min(low, c.readLow)
	}
	if size <= c.clean || low >= size {
		c.mu.Unlock()
		return
	}
	// Short reads from here on are new: the drop covers the pages of
	// those before it.
	c.low = math.MaxInt64
	c.mu.Unlock()
	ino.NotifyContent(low&^pageMask, 0)
	c.mu.Lock()
	c.clean = max(c.clean, size)
	c.mu.Unlock()
}

// below reports whether size exceeds the size the pages were last made
// clean for.
func (c *viewCache) below(size int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used && size > c.clean
}

// gapless reports whether the stream of n has no gap from position 0 on
// (layout.gapless) and its first record is the log's first, so that every
// open reads the same bytes at each position; only for a Log of local
// files (partlog.SegmentFiler), whose snapshots show every change. An
// error counts as a gap.
func (n *viewNode) gapless() bool {
	ok, err := n.withLocalLayout(func(ly *position.Layout) (bool, error) {
		return ly.Gapless(n.k) && n.p.log.StartOffset() <= ly.FirstBase(), nil
	})
	return err == nil && ok
}

// gaplessIn reports whether file positions [from, to) of n are in no gap
// (layout.gaplessIn) and after the log's first record: the bytes there
// stay what they are. An error counts as a gap.
func (n *viewNode) gaplessIn(from, to int64) bool {
	ok, err := n.withLocalLayout(func(ly *position.Layout) (bool, error) {
		from, to := n.startPos+from, n.startPos+to
		if start := n.p.log.StartOffset(); start > ly.FirstBase() {
			pos, err := ly.PosOf(n.k, start)
			if err != nil || from < pos {
				return false, err
			}
		}
		return ly.GaplessIn(n.k, from, to)
	})
	return err == nil && ok
}

// withLocalLayout runs fn on n's layout reconciled with a fresh snapshot,
// its last segment scanned, for a Log of local files
// (partlog.SegmentFiler) only; for others it reports false.
func (n *viewNode) withLocalLayout(fn func(ly *position.Layout) (bool, error)) (bool, error) {
	if _, ok := n.p.segmentFiler(); !ok {
		// Not the backend's own files: records may change behind its
		// snapshots (a cluster compacting), unseen until read again.
		return false, nil
	}
	ly := n.p.ly
	ok := false
	err := ly.WithSync(func() error {
		if _, err := ly.End(n.k); err != nil {
			return err
		}
		var err error
		ok, err = fn(ly)
		return err
	})
	return ok, err
}
