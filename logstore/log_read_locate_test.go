package logstore

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// countingFS counts the bytes read from .log files, and the reads when
// reads is not nil.
type countingFS struct {
	vfs.FS
	n, reads *atomic.Int64
}

type countingFile struct {
	vfs.File
	n, reads *atomic.Int64
}

func (c countingFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return countingFile{f, c.n, c.reads}, nil
}

func (c countingFS) Open(name string) (vfs.File, error) { return c.OpenFile(name, os.O_RDONLY, 0) }

func (c countingFS) Create(name string) (vfs.File, error) {
	return c.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.n.Add(int64(n))
	if f.reads != nil {
		f.reads.Add(1)
	}
	return n, err
}

// headerAt parses the batch header at pos of segment base's .log.
func headerAt(t *testing.T, fs vfs.FS, l *Log, base, pos int64) record.BatchHeader {
	t.Helper()
	f, err := fs.Open(segmentPath(l.dir, base, kafkaname.LogSuffix))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, record.BatchHeaderSize)
	if _, err := f.ReadAt(buf, pos); err != nil {
		t.Fatalf("segment %d position %d: %v", base, pos, err)
	}
	h, err := record.ParseHeader(buf)
	if err != nil {
		t.Fatalf("segment %d position %d: %v", base, pos, err)
	}
	return h
}

// Every offset locates the batch holding it, in every codec, through
// sparse indexes over many segments; offsets outside the log are
// ErrNotFound.
func TestLocateFindsTheBatchOfEveryOffset(t *testing.T) {
	for _, codec := range []string{"none", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			fs, c := vfs.NewCrashFS(), newClock()
			cfg := map[string]string{"compression.type": codec, "segment.bytes": "6000", "index.interval.bytes": "500"}
			st, l := openTest(t, fs, c, cfg)
			defer st.Close()
			for i := 0; i < 200; i++ {
				if _, err := l.Append(recs(1+i%7, fmt.Sprint(i), 1000+int64(i))); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(segmentBases(l)); n < 4 {
				t.Fatalf("only %d segments", n)
			}
			for off := int64(0); off < l.EndOffset(); off++ {
				seg, pos, err := l.Locate(off)
				if err != nil {
					t.Fatalf("Locate(%d): %v", off, err)
				}
				if off < seg.Base || off >= seg.Next {
					t.Fatalf("Locate(%d) gave segment [%d, %d)", off, seg.Base, seg.Next)
				}
				if h := headerAt(t, fs, l, seg.Base, pos); off < h.BaseOffset || off > h.LastOffset() {
					t.Fatalf("Locate(%d) gave position %d holding [%d, %d]", off, pos, h.BaseOffset, h.LastOffset())
				}
			}
			for _, off := range []int64{-1, l.EndOffset(), l.EndOffset() + 5} {
				if _, _, err := l.Locate(off); !errors.Is(err, partlog.ErrNotFound) {
					t.Fatalf("Locate(%d) = %v, want ErrNotFound", off, err)
				}
			}
		})
	}
}

// largeBatchLog is a log of three batches of 1000 records of 120 bytes
// (about 131 KB each, written as a segment file the open recovers) with
// reads of its .log files counted.
func largeBatchLog(t *testing.T) (*Store, *Log, *atomic.Int64) {
	var seg []byte
	var enc record.Encoder
	for i := 0; i < 3; i++ {
		var err error
		if seg, err = enc.AppendBatch(seg, int64(i)*1000, benchRecords(1000), record.BatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	crash, c := writePartition("t-0", map[string][]byte{"00000000000000000000.log": seg})
	var n atomic.Int64
	st, l := openTest(t, countingFS{crash, &n, nil}, c, nil)
	return st, l, &n
}

// Locate reads batch headers only (a few KB, not the 131 KB batch) and
// allocates nothing; reading the first record at an offset reads the one
// batch holding it once (with the next batch's base offset, which checks it).
func TestLocateReadsHeadersOnly(t *testing.T) {
	st, l, n := largeBatchLog(t)
	defer st.Close()
	first := headerAt(t, st.fs, l, 0, 0)
	for _, off := range []int64{0, 999, 1000, 1500, 2999} {
		n.Store(0)
		seg, pos, err := l.Locate(off)
		if err != nil || pos != off/1000*first.Size() {
			t.Fatalf("Locate(%d) = %d %v", off, pos, err)
		}
		if got := n.Load(); got > 2*headerProbe {
			t.Fatalf("Locate(%d) read %d bytes of the log", off, got)
		}
		h := headerAt(t, st.fs, l, 0, pos)
		n.Store(0)
		var got int64 = -1
		if err := l.Read(seg, off, func(r *record.Record) bool { got = r.Offset; return false }); err != nil || got != off {
			t.Fatalf("Read(%d) gave offset %d: %v", off, got, err)
		}
		size := h.Size()
		if read := n.Load(); read > size+2*headerProbe+nextHeaderPeek { // and the next base offset, its check
			t.Fatalf("first record at %d: read %d bytes, the batch is %d", off, read, size)
		}
	}
	if a := testing.AllocsPerRun(50, func() { l.Locate(1500) }); a != 0 {
		t.Fatalf("Locate allocates %.1f times", a)
	}
}

// A Read of one record and OffsetForTime allocate nothing once the pools
// are warm.
func TestReadAndTimeLookupAllocations(t *testing.T) {
	if testutil.Race {
		t.Skip("allocation counts do not hold under the race detector")
	}
	st, l, _ := largeBatchLog(t)
	defer st.Close()
	segs, release := l.Segments()
	defer release()
	var got int64
	fn := func(r *record.Record) bool { got = r.Offset; return false }
	if a := testing.AllocsPerRun(50, func() { l.Read(segs[0], 1500, fn) }); a != 0 || got != 1500 {
		t.Fatalf("Read allocates %.1f times (record %d)", a, got)
	}
	ts := benchRecords(1000)[500].Timestamp
	if off, err := l.OffsetForTime(ts); err != nil || off != 500 {
		t.Fatalf("OffsetForTime(%d) = %d %v", ts, off, err)
	}
}

// After a clean open (no recovery scan), a flipped payload byte fails a
// Read of that batch with ErrCorrupt naming file and position, while
// Locate, which reads headers only, still answers; a garbage size field
// fails Locate and Read with ErrCorrupt. Each error is a
// *record.CorruptionError whose File and Pos errors.As finds.
func TestLocateAndReadReportCorruption(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, nil)
	for i := 0; i < 4; i++ { // the fourth keeps the damage off the last batch, which a clean open checks
		if _, err := l.Append(recs(100, fmt.Sprint(i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	h := headerAt(t, fs, l, 0, 0)
	size := h.Size()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	path := segmentPath("/data/t-0", 0, kafkaname.LogSuffix)
	poke := func(pos int64, b []byte) {
		f, err := fs.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(b, pos); err != nil {
			t.Fatal(err)
		}
	}
	poke(size+100, []byte{0xff}) // inside the second batch's records
	poke(2*size+8, []byte{0x7f}) // the third batch's size field
	st, l = openTest(t, fs, c, nil)
	defer st.Close()
	if _, pos, err := l.Locate(150); err != nil || pos != size {
		t.Fatalf("Locate(150) = %d %v, want %d", pos, err, size)
	}
	segs, release := l.Segments()
	defer release()
	corruptAt := func(what string, err error, pos int64) {
		t.Helper()
		var ce *record.CorruptionError
		if !errors.Is(err, partlog.ErrCorrupt) || !errors.As(err, &ce) || ce.File != path || ce.Pos != pos {
			t.Fatalf("%s: %v, want a corruption of %s at position %d", what, err, path, pos)
		}
	}
	corruptAt("Read over a flipped byte", l.Read(segs[0], 150, func(*record.Record) bool { return true }), size)
	_, _, err := l.Locate(250)
	corruptAt("Locate past a garbage size", err, 2*size)
	// the checking scan that takes over reports the first bad batch on its way
	corruptAt("Read at a garbage size", l.Read(segs[0], 250, func(*record.Record) bool { return true }), size)
}

// A lookup's first read reaches as far as the segment's batch size hint
// suggests; whatever the hint (none, far too small, learned from the
// lookups before, far too large), Locate finds the batch of every offset, Read the record at it
// and OffsetForTime the first record at or after every timestamp, over batches of uneven sizes
// several to an index entry. With the right hint and even batches, a
// Locate reads no more than the bare reader: from the index entry's
// position to the end of the batch it finds, plus one header.
func TestLookupsWhateverTheBatchHint(t *testing.T) {
	var n atomic.Int64
	fs := countingFS{vfs.NewCrashFS(), &n, nil}
	st, l := openTest(t, fs, newClock(), map[string]string{"index.interval.bytes": "900", "segment.bytes": "20000"})
	defer st.Close()
	ts0 := int64(1_764_410_400_000)
	for i := 0; i < 300; i++ {
		rs := benchRecords(2 + i%3*(i/150))
		for j := range rs {
			rs[j].Timestamp = ts0 + 2*(l.EndOffset()+int64(j))
		}
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	l.mu.Lock()
	segs := append([]*segment(nil), l.segs...)
	l.mu.Unlock()
	for _, hint := range []int64{0, 1, -1, 1 << 30} { // -1: what the lookups learn
		for off := int64(0); off < l.EndOffset(); off++ {
			for _, s := range segs {
				if hint >= 0 {
					s.batchHint.Store(hint)
				}
			}
			n.Store(0)
			seg, pos, err := l.Locate(off)
			read := n.Load()
			if err != nil {
				t.Fatalf("hint %d: Locate(%d): %v", hint, off, err)
			}
			h := headerAt(t, st.fs, l, seg.Base, pos)
			if off < h.BaseOffset || off > h.LastOffset() {
				t.Fatalf("hint %d: Locate(%d) gave position %d holding [%d, %d]", hint, off, pos, h.BaseOffset, h.LastOffset())
			}
			s := segs[l.floorSegment(off)]
			if sp := s.spanFor(off, seg.Size); hint < 0 && off < 150*2 && sp.next > 0 && read > pos+h.Size()+record.BatchHeaderSize-sp.pos {
				t.Fatalf("Locate(%d) read %d bytes from %d for the batch [%d, %d)", off, read, sp.pos, pos, pos+h.Size())
			}
			got := int64(-1)
			if err := l.Read(seg, off, func(r *record.Record) bool { got = r.Offset; return false }); err != nil || got != off {
				t.Fatalf("hint %d: Read(%d) gave offset %d: %v", hint, off, got, err)
			}
			for _, ts := range []int64{ts0 + 2*off - 1, ts0 + 2*off} {
				if got, err := l.OffsetForTime(ts); err != nil || got != off {
					t.Fatalf("hint %d: OffsetForTime(%d) = %d %v, want %d", hint, ts, got, err, off)
				}
			}
		}
	}
}

// A time lookup in batches of 10 records, several to an index entry,
// reads the segment once, also when the answer is in the batch at the
// next index entry (whose timestamp, the largest of that batch, is the
// one past the target): its first read covers that batch up to the
// guessed answer. (Before the first entry and after the last, with no
// span to estimate from, the first read is headerProbe long.)
func TestTimeLookupReadsOnce(t *testing.T) {
	var n, reads atomic.Int64
	st, l := openTest(t, countingFS{vfs.NewCrashFS(), &n, &reads}, newClock(), nil)
	defer st.Close()
	ts0 := int64(1_764_410_400_000)
	for i := 0; i < 200; i++ {
		rs := benchRecords(10)
		for j := range rs {
			rs[j].Timestamp = ts0 + l.EndOffset() + int64(j)
		}
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	// a first lookup learns the batch size
	l.OffsetForTime(ts0 + 1000)
	for off := int64(100); off < l.EndOffset()-100; off++ { // between entries
		reads.Store(0)
		if got, err := l.OffsetForTime(ts0 + off); err != nil || got != off {
			t.Fatalf("OffsetForTime(%d) = %d %v, want %d", ts0+off, got, err, off)
		}
		if r := reads.Load(); r != 1 {
			t.Fatalf("OffsetForTime of offset %d: %d reads", off, r)
		}
	}
}
