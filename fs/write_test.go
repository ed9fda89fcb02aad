package fs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// writeHandle opens a writable handle of kind k on partition 0 of a new
// topic of st, without a mount. Its layout is synced, as an open does.
func writeHandle(t testing.TB, st partlog.Store, k kind) *viewHandle {
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
	p.ly = newLayout(p.log, p.lg)
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

// lockSynced locks ly and syncs it with its log; done releases both.
func lockSynced(t testing.TB, ly *layout) (done func()) {
	t.Helper()
	ly.mu.Lock()
	release, err := ly.sync()
	done = func() { release(); ly.mu.Unlock() }
	if err != nil {
		done()
		t.Fatal(err)
	}
	return done
}

func syncLayout(t testing.TB, ly *layout) { lockSynced(t, ly)() }

// scanAll syncs ly and scans every segment to its end; it returns the
// segments' bookkeeping.
func scanAll(t *testing.T, ly *layout) []*segInfo {
	t.Helper()
	defer lockSynced(t, ly)()
	for _, s := range ly.segs {
		if err := ly.scan(s, s.snap.Next); err != nil {
			t.Fatal(err)
		}
	}
	return ly.segs
}

// scannedSegs is the bookkeeping of every segment of l as a fresh layout
// computes it by reading the records back.
func scannedSegs(t *testing.T, l partlog.Log) []*segInfo {
	t.Helper()
	return scanAll(t, &layout{log: l, lg: testutil.NewLogger().Entry})
}

// sameBookkeeping fails unless the bookkeeping that appends kept equals
// what a scan of the log computes: lengths, checkpoints, starts; besides
// the scan's checkpoints appends may keep others at batch starts
// (batchCkpt), each at the position the scan gives its record.
func sameBookkeeping(t *testing.T, ly *layout) {
	t.Helper()
	got := scanAll(t, ly)
	fresh := &layout{log: ly.log, lg: testutil.NewLogger().Entry}
	want := scanAll(t, fresh)
	if len(got) != len(want) {
		t.Fatalf("%d segments, scan has %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.start != w.start || g.next != w.next || g.length != w.length || g.lastCk != w.lastCk {
			t.Fatalf("segment %d: appends kept start %v next %d length %v lastCk %v; scan: %v %d %v %v",
				w.base, g.start, g.next, g.length, g.lastCk, w.start, w.next, w.length, w.lastCk)
		}
		var scanned []ckpt
		for _, c := range g.ckpts {
			if slices.Contains(w.ckpts, c) {
				scanned = append(scanned, c)
			} else if pos := ckptAt(t, fresh, c.off); pos != [2]int64{g.start[0] + c.pos[0], g.start[1] + c.pos[1]} {
				t.Fatalf("segment %d: appends kept a checkpoint %v, the scan places record %d at %v", w.base, c, c.off, pos)
			}
		}
		if !slices.Equal(scanned, w.ckpts) {
			t.Fatalf("segment %d: appends kept checkpoints %v\nscan: %v", w.base, g.ckpts, w.ckpts)
		}
	}
}

// ckptAt is where ly places record off in both streams.
func ckptAt(t *testing.T, ly *layout, off int64) (pos [2]int64) {
	t.Helper()
	defer lockSynced(t, ly)()
	for k := range pos {
		var err error
		if pos[k], err = ly.posOf(kind(k), off); err != nil {
			t.Fatal(err)
		}
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
	h := writeHandle(t, st, plainKind)
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
	if end := endOf(t, h.n.p.ly, jsonKind); rc.reads != 0 || end == 0 {
		t.Fatalf("%d records read back after appends (end %d)", rc.reads, end)
	}
	sameBookkeeping(t, h.n.p.ly)
	rc.reads = 0
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "segment.bytes", Value: "1000000"}}); err != nil {
		t.Fatal(err)
	}
	writeInPieces([]byte(variedLines(rng, 20000)))
	if end := endOf(t, h.n.p.ly, jsonKind); rc.reads != 0 || end == 0 {
		t.Fatalf("%d records read back after appends across rolls (end %d)", rc.reads, end)
	}
	if n := len(scannedSegs(t, h.n.p.log)); n < 3 {
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
	h := writeHandle(t, st, jsonKind)
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
	if end := endOf(t, h.n.p.ly, jsonKind); rc.reads != 0 || end == 0 {
		t.Fatalf("%d records read back after appends (end %d)", rc.reads, end)
	}
	sameBookkeeping(t, h.n.p.ly)
	for _, odd := range []string{`,"timestamp":5`, `,"timestamp":10000000000000`, `,"timestamp":999999999999`} {
		rc.reads = 0
		write(1000, "", `,"timestamp":1764410400000`, odd)
		if endOf(t, h.n.p.ly, jsonKind); rc.reads != 1000 {
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
	h := writeHandle(b, st, plainKind)
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

// TestMeasurePanicIsAnError: a panic while measuring, in line or aside,
// becomes an error that names the record, not a crash.
func TestMeasurePanicIsAnError(t *testing.T) {
	for _, aside := range []bool{false, true} {
		m := start(1, aside, func(m *measurement) {
			m.note(&record.Record{Value: []byte("x")})
			panic("measuring")
		})
		if err := m.wait(); err == nil || !strings.Contains(err.Error(), "measuring record 1: panic") {
			t.Fatalf("aside %v: error %v", aside, err)
		}
		m.release()
	}
}

// TestMeasureLines: measuring lines, in line or aside, gives the figures
// of measuring the records made of them.
func TestMeasureLines(t *testing.T) {
	head := []byte("joined \"line\"\n")
	var body []byte
	for i := 0; len(body) < 2*measureAsideBytes; i++ {
		body = fmt.Appendf(body, "line %d \xff\t%s\n", i, strings.Repeat("é", i%5))
	}
	for _, b := range [][]byte{body[:40], body} {
		recs := record.AppendLineRecords(nil, head, b)
		want := measure(recs)
		got := measureLines(head, b)
		if want.wait() != nil || got.wait() != nil || !slices.Equal(got.sums, want.sums) ||
			got.values != want.values || got.minTs != 0 || got.maxTs != 0 || len(got.sums) != len(recs) {
			t.Fatalf("%d bytes: lines measured %d records, %d value bytes; records %d, %d",
				len(b), len(got.sums), got.values, len(want.sums), want.values)
		}
		want.release()
		got.release()
	}
}

// TestMeasurePlainLines: lines of plain ASCII, measured from their ends
// alone, give the figures of measuring the records made of them: empty
// lines, chunks ending inside a line, a head of one line, in line and
// aside; one byte that is not plain anywhere falls back to measuring
// record by record, with the same figures.
func TestMeasurePlainLines(t *testing.T) {
	var body []byte
	for i := 0; len(body) < 2*measureAsideBytes; i++ {
		body = fmt.Appendf(body, "%d %s\n", i, strings.Repeat("ab", i%70))
		if i%17 == 0 {
			body = append(body, '\n')
		}
	}
	cases := [][2][]byte{
		{nil, body},
		{[]byte("held line\n"), body[:500]},
		{[]byte("\n"), append(body[:300:300], "tail without end"...)},
		{[]byte("x\n"), nil},
		{nil, []byte("no line end")},
	}
	// JSON lines: printable ASCII with quotes and backslashes, measured
	// from their ends and quote counts; quotes in a head's bytes after its
	// last line end belong to no line.
	var js []byte
	for i := 0; len(js) < 2*measureAsideBytes; i++ {
		js = fmt.Appendf(js, `{"n":%d,"msg":"say \"%s\"","path":"c:\\%d"}`+"\n", i, strings.Repeat("ab", i%40), i)
	}
	cases = append(cases, [2][]byte{nil, js}, [2][]byte{[]byte(`"q"` + "\n" + `"dropped \" tail`), js[:700]},
		[2][]byte{[]byte(`{"a":"\\"}` + "\n"), append(js[:200:200], `"tail \"`...)})
	for _, bad := range []byte{'"', '\\', '\t', 0x7f, 0x80, 0xff} {
		odd := slices.Clone(body)
		odd[len(odd)/2] = bad
		cases = append(cases, [2][]byte{[]byte("head\n"), odd})
	}
	for i, c := range cases {
		recs := record.AppendLineRecords(nil, c[0], c[1])
		want := measure(recs)
		got := measureLines(c[0], c[1])
		if want.wait() != nil || got.wait() != nil || !slices.Equal(got.sums, want.sums) ||
			got.values != want.values || got.minTs != want.minTs || got.maxTs != want.maxTs {
			t.Fatalf("case %d: lines measured %d records, %d value bytes; records %d, %d",
				i, len(got.sums), got.values, len(want.sums), want.values)
		}
		want.release()
		got.release()
	}
}

// A big append (one batch of 64 KiB or more) and the append after it get
// a checkpoint at their first record: finding the position of either
// record reads no record before it, and the position is the scan's.
func TestBigAppendStartsCheckpoint(t *testing.T) {
	st := memlog.New(memlog.Options{})
	h := writeHandle(t, st, plainKind)
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
		if fresh := ckptAt(t, &layout{log: h.n.p.log, lg: testutil.NewLogger().Entry}, off); fresh != pos {
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
