package logstore

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// modelIndexes applies Kafka's rule to the batches of a .log and returns
// the expected .index and .timeindex bytes (with the final time entry).
func modelIndexes(t testing.TB, logBytes []byte, base int64, interval int) ([]byte, []byte) {
	t.Helper()
	var oi, ti []byte
	since := int64(0)
	maxTs, offMax := int64(-1), base
	lastTs := int64(-1)
	appendTime := func(ts, off int64) {
		if ts > lastTs {
			ti = binary.BigEndian.AppendUint64(ti, uint64(ts))
			ti = binary.BigEndian.AppendUint32(ti, uint32(off-base))
			lastTs = ts
		}
	}
	sc := record.NewScanner(readerAt(logBytes), 0, int64(len(logBytes)), "model")
	for sc.Next() {
		b := sc.Batch()
		if b.Header.MaxTimestamp > maxTs {
			maxTs, offMax = b.Header.MaxTimestamp, b.Header.LastOffset()
		}
		if since > int64(interval) {
			oi = binary.BigEndian.AppendUint32(oi, uint32(b.Header.LastOffset()-base))
			oi = binary.BigEndian.AppendUint32(oi, uint32(b.Pos))
			appendTime(maxTs, offMax)
			since = 0
		}
		since += b.Header.Size()
	}
	if sc.Err() != nil {
		t.Fatal(sc.Err())
	}
	appendTime(maxTs, offMax)
	return oi, ti
}

type readerAt []byte

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r)) {
		return 0, errEOF
	}
	n := copy(p, r[off:])
	if n < len(p) {
		return n, errEOF
	}
	return n, nil
}

func TestIndexRuleMatchesModel(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, map[string]string{"index.interval.bytes": "300"})
	rng := rand.New(rand.NewSource(1))
	ts := int64(1_000_000)
	for i := 0; i < 200; i++ {
		n := 1 + rng.Intn(5)
		rs := recs(n, "v", 0)
		for j := range rs {
			rs[j].Value = make([]byte, rng.Intn(200))
			rs[j].Timestamp = ts + int64(rng.Intn(2000)) - 1000 // out of order
		}
		ts += 100
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	logBytes := readFileBytes(t, fs, "/data/t-0/00000000000000000000.log")
	wantO, wantT := modelIndexes(t, logBytes, 0, 300)
	gotO := readFileBytes(t, fs, "/data/t-0/00000000000000000000.index")
	gotT := readFileBytes(t, fs, "/data/t-0/00000000000000000000.timeindex")
	if string(gotO) != string(wantO) || len(wantO) == 0 {
		t.Fatalf(".index differs from Kafka's rule: got %d bytes want %d", len(gotO), len(wantO))
	}
	if string(gotT) != string(wantT) {
		t.Fatalf(".timeindex differs from Kafka's rule: got %x want %x", gotT, wantT)
	}
	// an unclean reopen rebuilds byte-identical indexes
	fs.Remove("/data/.kafka_cleanshutdown")
	fs.Remove("/data/t-0/00000000000000000000.index")
	st, l = openTest(t, fs, c, map[string]string{"index.interval.bytes": "300"})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFileBytes(t, fs, "/data/t-0/00000000000000000000.index"); string(got) != string(wantO) {
		t.Fatalf("rebuilt .index differs: %d bytes want %d", len(got), len(wantO))
	}
	if got := readFileBytes(t, fs, "/data/t-0/00000000000000000000.timeindex"); string(got) != string(wantT) {
		t.Fatalf("rebuilt .timeindex differs")
	}
}

func segmentBases(l *Log) []int64 {
	segs, release := l.Segments()
	defer release()
	var out []int64
	for _, s := range segs {
		out = append(out, s.Base)
	}
	return out
}

func TestRollOnSegmentBytes(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, map[string]string{"segment.bytes": "1000"})
	defer st.Close()
	for i := 0; i < 30; i++ {
		rs := recs(1, "x", 0)
		rs[0].Value = make([]byte, 100)
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	segs, release := l.Segments()
	defer release()
	if len(segs) < 4 {
		t.Fatalf("only %d segments", len(segs))
	}
	for i, s := range segs {
		if s.Size > 1000 {
			t.Fatalf("segment %d has %d bytes > segment.bytes", s.Base, s.Size)
		}
		if i > 0 && s.Base != segs[i-1].Next {
			t.Fatalf("segment %d does not start at previous next %d", s.Base, segs[i-1].Next)
		}
		if !exists(fs, segmentPath("/data/t-0", s.Base, ".log")) {
			t.Fatalf("no file for segment %d", s.Base)
		}
		if i < len(segs)-1 && fileSize(t, fs, segmentPath("/data/t-0", s.Base, ".index"))%8 != 0 {
			t.Fatal("bad index size")
		}
	}
	// sealed segments have trimmed indexes, the active one is preallocated
	if n := fileSize(t, fs, segmentPath("/data/t-0", segs[0].Base, ".index")); n >= 10<<20 {
		t.Fatalf("sealed index not trimmed: %d", n)
	}
	if n := fileSize(t, fs, segmentPath("/data/t-0", segs[len(segs)-1].Base, ".timeindex")); n != 10485756 {
		t.Fatalf("active time index %d bytes, want 10485756", n)
	}
}

func TestRollOnSegmentMs(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, map[string]string{"segment.ms": "1000"})
	defer st.Close()
	base := c.Now().UnixMilli()
	l.Append(recs(1, "a", base))
	l.Append(recs(1, "b", base+999)) // waited 999 <= 1000: same segment
	l.Append(recs(1, "c", base+1000))
	if n := len(segmentBases(l)); n != 1 {
		t.Fatalf("%d segments before segment.ms passed", n)
	}
	l.Append(recs(1, "d", base+1001)) // 1001 > 1000: roll
	if got := segmentBases(l); len(got) != 2 || got[1] != 3 {
		t.Fatalf("segments %v, want a roll at offset 3", got)
	}
	c.Add(2 * time.Second)
	l.Append(recs(1, "e", 0)) // timestamp = now = base+2000; first batch of seg 3 had base+1001
	if got := segmentBases(l); len(got) != 2 {
		t.Fatalf("segments %v: 999 ms waited must not roll", got)
	}
	l.Append(recs(1, "f", base+2002))
	if got := segmentBases(l); len(got) != 3 {
		t.Fatalf("segments %v: 1001 ms waited must roll", got)
	}
}

func TestRollJitter(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	opt := testOptions(fs, c, map[string]string{"segment.ms": "1000", "segment.jitter.ms": "500"})
	opt.Jitter = func(n int64) int64 {
		if n != 500 {
			t.Errorf("jitter bound %d, want min(jitter, segment.ms) = 500", n)
		}
		return 300
	}
	st, l := openAt(t, "/data", opt)
	defer st.Close()
	base := c.Now().UnixMilli()
	l.Append(recs(1, "a", base))
	l.Append(recs(1, "b", base+700)) // 700 = 1000-300: no roll
	if n := len(segmentBases(l)); n != 1 {
		t.Fatalf("%d segments", n)
	}
	l.Append(recs(1, "c", base+701))
	if n := len(segmentBases(l)); n != 2 {
		t.Fatalf("%d segments: jittered roll missing", n)
	}
}

func TestRollOnFullIndex(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	// 48 bytes: 6 offset entries, 4 time entries (full at 3: one slot kept)
	st, l := openTest(t, fs, c, map[string]string{"segment.index.bytes": "48", "index.interval.bytes": "0"})
	defer st.Close()
	ts := c.Now().UnixMilli()
	for i := 0; i < 10; i++ {
		if _, err := l.Append(recs(1, "x", ts+int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	// each batch after the first gets an entry; the time index is full at
	// 3 entries, so a segment holds 4 batches
	if got := segmentBases(l); len(got) != 3 || got[1] != 4 || got[2] != 8 {
		t.Fatalf("segments %v, want [0 4 8]", got)
	}
	ti := readFileBytes(t, fs, "/data/t-0/00000000000000000000.timeindex")
	if len(ti) != 3*12 {
		// the roll entry adds nothing: the max timestamp is already there
		t.Fatalf("sealed time index has %d bytes, want 3 entries", len(ti))
	}
}

func TestRollOnRelativeOffsetOverflow(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, nil)
	defer st.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.active()
	s.size = 100
	h := record.BatchHeader{BaseOffset: math.MaxInt32, LastOffsetDelta: 0, Length: 100, MaxTimestamp: 1}
	if l.shouldRoll(s, &h, c.Now()) {
		t.Fatal("relative offset MaxInt32 must fit")
	}
	h.BaseOffset = math.MaxInt32 + 1
	if !l.shouldRoll(s, &h, c.Now()) {
		t.Fatal("relative offset past 32 bits must roll")
	}
}

// TestAppendAfterRecoveryStartsIndexCount: Kafka's LogSegment starts
// counting bytes for the next index entry at 0 when it is opened, recovery
// or not, so the first append after an unclean start never gets an entry
// (the rebuilt entries follow recover()'s own count).
func TestAppendAfterRecoveryStartsIndexCount(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	cfg := map[string]string{"index.interval.bytes": "4096"}
	st, l := openTest(t, fs, c, cfg)
	for range 6 { // 1.5 KB batches: entries at the 4th; 4.5 KB since the last when closed
		rs := recs(15, "v", 0)
		for j := range rs {
			rs[j].Value = make([]byte, 90)
		}
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	const seg = "/data/t-0/00000000000000000000"
	before := readFileBytes(t, fs, seg+".log")
	wantO, _ := modelIndexes(t, before, 0, 4096)
	fs.Remove("/data/.kafka_cleanshutdown")
	st, l = openTest(t, fs, c, cfg)
	if _, err := l.Append(recs(1, "after", 0)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFileBytes(t, fs, seg+".index"); string(got) != string(wantO) || len(wantO) != 8 {
		t.Fatalf(".index after recovery and one append: %x, want %x (no entry for the first append)", got, wantO)
	}
}
