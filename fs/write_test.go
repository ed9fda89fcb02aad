package fs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// writeHandle opens a writable handle of kind k on partition 0 of a new
// topic of st, without a mount. Its layout is synced, as an open does.
func writeHandle(t testing.TB, st partlog.Store, k position.Kind) *viewHandle {
	t.Helper()
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	fsys := New(Options{Store: st, Logger: testutil.NewLogger().Entry})
	p, err := fsys.part("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	syncLayout(t, p.ly)
	return &viewHandle{n: &viewNode{p: p, k: k, lg: p.lg, writable: true}}
}

// wrapLog puts w around the handle's log, with a new layout over it.
func wrapLog(t testing.TB, h *viewHandle, w func(partlog.Log) partlog.Log) {
	p := h.n.p
	p.log = w(p.log)
	p.ly = position.NewLayout(p.log, p.lg)
	syncLayout(t, p.ly)
}

// readCounter counts the records read back from a log.
type readCounter struct {
	partlog.Log
	reads     int
	lineCalls int // of AppendLines, through a lineReadCounter
}

// lineReadCounter is a readCounter whose log keeps its AppendLines.
type lineReadCounter struct{ *readCounter }

func (r lineReadCounter) AppendLines(chunks ...[]byte) (int64, int, error) {
	r.lineCalls++
	return r.Log.(partlog.LineAppender).AppendLines(chunks...)
}

func (r *readCounter) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	return r.Log.Read(seg, from, func(rec *record.Record) bool {
		r.reads++
		return fn(rec)
	})
}

// syncLayout syncs ly with its log.
func syncLayout(t testing.TB, ly *position.Layout) {
	t.Helper()
	if err := ly.WithSync(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// endOf is the end of stream k of ly.
func endOf(t *testing.T, ly *position.Layout, k position.Kind) (end int64) {
	t.Helper()
	err := ly.WithSync(func() (err error) {
		end, err = ly.End(k)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return end
}

// sameBookkeeping fails unless the bookkeeping that appends kept equals
// what a scan of the log computes (Layout.Check).
func sameBookkeeping(t *testing.T, ly *position.Layout) {
	t.Helper()
	if err := ly.Check(); err != nil {
		t.Fatal(err)
	}
}

// ckptAt is where ly places record off in both streams.
func ckptAt(t *testing.T, ly *position.Layout, off int64) [2]int64 {
	t.Helper()
	pos, err := ly.PosBoth(off)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// variedLines is n lines of varied lengths and bytes: plain ASCII mostly,
// with quotes, backslashes, control bytes, UTF-8 (U+2028 too), invalid
// UTF-8 and empty lines.
func variedLines(rng *rand.Rand, n int) string {
	odd := []string{`"`, `\`, "\t", "\r", "\x01", "\x7f", "é", "\u2028", "\xff", "\xc3"}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%d %s", i, strings.Repeat("x", rng.IntN(300)))
		if rng.IntN(4) == 0 {
			sb.WriteString(odd[rng.IntN(len(odd))])
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// TestAppendBookkeepingMatchesScan: what appends note of positions (large
// writes measured aside, small ones in line, partial lines carried over)
// equals what a scan of the log reads back, and nothing was read back, not
// even after the log rolled to new segments.
func TestAppendBookkeepingMatchesScan(t *testing.T) {
	for _, lines := range []bool{true, false} {
		t.Run(fmt.Sprint("AppendLines=", lines), func(t *testing.T) { testAppendBookkeeping(t, lines) })
	}
}

// testAppendBookkeeping runs TestAppendBookkeepingMatchesScan on a log
// with AppendLines, or without (the fs then makes the records).
func testAppendBookkeeping(t *testing.T, lines bool) {
	st := memlog.New(memlog.Options{})
	h := writeHandle(t, st, position.Plain)
	rc := &readCounter{}
	wrapLog(t, h, func(l partlog.Log) partlog.Log {
		if rc.Log = l; lines {
			return lineReadCounter{rc}
		}
		return rc
	})
	// memlog creates the first segment at the first append; a sync (an
	// open, a stat) must see it before appends can be noted.
	if _, errno := h.Write(context.Background(), []byte("first\n"), 0); errno != 0 {
		t.Fatal(errno)
	}
	syncLayout(t, h.n.p.ly)
	rng := rand.New(rand.NewPCG(3, 4))
	writeInPieces := func(data []byte) {
		for len(data) > 0 {
			n := min(len(data), []int{1, 100, 5000, 1 << 20}[rng.IntN(4)])
			if _, errno := h.Write(context.Background(), data[:n], 0); errno != 0 {
				t.Fatal(errno)
			}
			data = data[n:]
		}
	}
	writeInPieces([]byte(variedLines(rng, 20000)))
	// lines longer than the checkpoint distance: checkpoints at
	// consecutive records
	writeInPieces([]byte(strings.Repeat(strings.Repeat("y", 70<<10)+"\n", 5) + strings.Repeat("z", 200<<10) + "\n"))
	if end := endOf(t, h.n.p.ly, position.JSON); rc.reads != 0 || end == 0 {
		t.Fatalf("%d records read back after appends (end %d)", rc.reads, end)
	}
	sameBookkeeping(t, h.n.p.ly)
	rc.reads = 0
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "segment.bytes", Value: "1000000"}}); err != nil {
		t.Fatal(err)
	}
	writeInPieces([]byte(variedLines(rng, 20000)))
	if end := endOf(t, h.n.p.ly, position.JSON); rc.reads != 0 || end == 0 {
		t.Fatalf("%d records read back after appends across rolls (end %d)", rc.reads, end)
	}
	if n := segmentCount(h.n.p.log); n < 3 {
		t.Fatalf("%d segments, want several", n)
	}
	sameBookkeeping(t, h.n.p.ly)
	if lines != (rc.lineCalls > 0) {
		t.Fatalf("%d writes through AppendLines", rc.lineCalls)
	}
}

// TestJSONLAppendBookkeepingMatchesScan: the same for log.jsonl writes with
// keys, headers and timestamps. Appends whose timestamps all have 13 digits
// are noted (other than now's, too); one of another width leaves its
// append to the scan.
func TestJSONLAppendBookkeepingMatchesScan(t *testing.T) {
	st := memlog.New(memlog.Options{})
	h := writeHandle(t, st, position.JSON)
	rc := &readCounter{}
	wrapLog(t, h, func(l partlog.Log) partlog.Log { rc.Log = l; return rc })
	write := func(n int, ts ...string) {
		t.Helper()
		var sb strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, `{"key":"k%d","value":"v\"%d\u2028","headers":[["h",{"b64":"/w=="}]]%s}`+"\n", i, i, ts[i%len(ts)])
		}
		if _, errno := h.Write(context.Background(), []byte(sb.String()), 0); errno != 0 {
			t.Fatal(errno)
		}
	}
	write(1, "")
	syncLayout(t, h.n.p.ly)
	write(1000, "", `,"timestamp":1764410400000`, `,"timestamp":9999999999999`, `,"timestamp":1000000000000`)
	write(10, `,"timestamp":1764410400000`)
	if end := endOf(t, h.n.p.ly, position.JSON); rc.reads != 0 || end == 0 {
		t.Fatalf("%d records read back after appends (end %d)", rc.reads, end)
	}
	sameBookkeeping(t, h.n.p.ly)
	for _, odd := range []string{`,"timestamp":5`, `,"timestamp":10000000000000`, `,"timestamp":999999999999`} {
		rc.reads = 0
		write(1000, "", `,"timestamp":1764410400000`, odd)
		if endOf(t, h.n.p.ly, position.JSON); rc.reads != 1000 {
			t.Fatalf("%s: %d records read back, want the append's 1000", odd, rc.reads)
		}
		sameBookkeeping(t, h.n.p.ly)
	}
}

// sinkLog is a partition log whose appends only advance its end offset, so
// that BenchmarkWriteMiB measures the filesystem's share of a write.
type sinkLog struct {
	partlog.Log
	end int64
}

func (l *sinkLog) Append(recs []record.Record) (int64, error) {
	first := l.end
	l.end += int64(len(recs))
	return first, nil
}

func (l *sinkLog) AppendLines(chunks ...[]byte) (int64, int, error) {
	first, n := l.end, 0
	for _, c := range chunks {
		n += bytes.Count(c, []byte{'\n'})
	}
	l.end += int64(n)
	return first, n, nil
}

func (l *sinkLog) Segments() ([]partlog.Segment, func()) {
	return []partlog.Segment{{Next: l.end, Size: l.end, MaxTimestamp: -1, ID: 1}}, func() {}
}

// BenchmarkWriteMiB: a 1 MiB write of 101-byte lines into log, as `cat`
// sends it, without the FUSE round trip or the log's own append.
func BenchmarkWriteMiB(b *testing.B) {
	st := memlog.New(memlog.Options{})
	h := writeHandle(b, st, position.Plain)
	wrapLog(b, h, func(l partlog.Log) partlog.Log { return &sinkLog{Log: l} })
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "%010d%s\n", i, strings.Repeat("abcdefghij", 9))
	}
	data := []byte(sb.String()[:1<<20])
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, errno := h.Write(context.Background(), data, 0); errno != 0 {
			b.Fatal(errno)
		}
	}
}

// A big append (one batch of 64 KiB or more) and the append after it get
// a checkpoint at their first record: finding the position of either
// record reads no record before it, and the position is the scan's.
func TestBigAppendStartsCheckpoint(t *testing.T) {
	st := memlog.New(memlog.Options{})
	h := writeHandle(t, st, position.Plain)
	lowest := &lowestRead{}
	wrapLog(t, h, func(l partlog.Log) partlog.Log { lowest.Log = l; return lowest })
	write := func(lines, width int) (first int64) {
		first = h.n.p.log.EndOffset()
		if _, errno := h.Write(context.Background(), []byte(strings.Repeat(strings.Repeat("x", width-1)+"\n", lines)), 0); errno != 0 {
			t.Fatal(errno)
		}
		return first
	}
	write(1, 10)
	syncLayout(t, h.n.p.ly)
	write(300, 100)
	big := write(1000, 120) // 120,000 bytes
	after := write(700, 120)
	write(300, 100)
	for _, off := range []int64{big, after} {
		lowest.min = -1
		pos := ckptAt(t, h.n.p.ly, off)
		if lowest.min != off {
			t.Fatalf("placing record %d read from record %d", off, lowest.min)
		}
		if fresh := ckptAt(t, h.n.p.ly.Rescan(), off); fresh != pos {
			t.Fatalf("record %d placed at %v, a scan places it at %v", off, pos, fresh)
		}
	}
	sameBookkeeping(t, h.n.p.ly)
}

// lowestRead is a log noting the lowest offset a Read passed (-1: none).
type lowestRead struct {
	partlog.Log
	min int64
}

func (r *lowestRead) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	return r.Log.Read(seg, from, func(rec *record.Record) bool {
		if r.min < 0 || rec.Offset < r.min {
			r.min = rec.Offset
		}
		return fn(rec)
	})
}

// segmentCount is the number of segments of l.
func segmentCount(l partlog.Log) int {
	segs, release := l.Segments()
	defer release()
	return len(segs)
}
