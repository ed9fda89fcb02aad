package logstore

import (
	"math/rand"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// linearOffsetForTime is the oracle: the first record (offset order) with
// timestamp >= ts, else the end.
func linearOffsetForTime(all []rec, ts, end int64) int64 {
	for _, r := range all {
		if r.ts >= ts {
			return r.off
		}
	}
	return end
}

func linearMax(all []rec, end int64) int64 {
	best, off := int64(-1), end
	for _, r := range all {
		if r.ts > best {
			best, off = r.ts, r.off
		}
	}
	return off
}

func TestLookupsMatchLinearScan(t *testing.T) {
	for _, codec := range []string{"none", "lz4", "gzip", "zstd", "snappy"} {
		t.Run(codec, func(t *testing.T) { testLookups(t, codec) })
	}
}

func testLookups(t *testing.T, codec string) {
	fs, c := vfs.NewCrashFS(), newClock()
	cfg := map[string]string{"compression.type": codec, "segment.bytes": "4000", "index.interval.bytes": "200"}
	st, l := openTest(t, fs, c, cfg)
	rng := rand.New(rand.NewSource(int64(len(codec))))
	ts := appendOutOfOrder(t, l, rng, 300, true) // out of order CreateTime
	if n := len(segmentBases(l)); n < 5 {
		t.Fatalf("only %d segments", n)
	}
	all := readLog(t, l, 0)
	end := l.EndOffset()
	if int64(len(all)) != end {
		t.Fatalf("read %d records, end %d", len(all), end)
	}
	for i, r := range all {
		if r.off != int64(i) {
			t.Fatalf("record %d has offset %d", i, r.off)
		}
	}
	check := func(ts int64) {
		got, err := l.OffsetForTime(ts)
		if err != nil {
			t.Fatal(err)
		}
		if want := linearOffsetForTime(all, ts, end); got != want {
			t.Fatalf("OffsetForTime(%d) = %d, linear scan says %d", ts, got, want)
		}
	}
	checkAll := func() {
		check(0)             // before the first
		check(ts + 1_000_00) // after the last
		for i := 0; i < 300; i++ {
			check(1_000_000 - 2000 + rng.Int63n(ts-1_000_000+4000))
		}
	}
	checkAll()
	for _, clean := range []bool{true, false} { // indexes as loaded from disk
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if !clean {
			fs.Remove("/data/.kafka_cleanshutdown")
		}
		st, l = openTest(t, fs, c, cfg)
		checkAll()
	}
	defer st.Close()
	for i := 0; i < 300; i++ { // reads from random offsets
		from := rng.Int63n(end)
		got := readN(t, l, from, 3)
		if len(got) == 0 || got[0] != all[from] {
			t.Fatalf("read from %d: got %v want %v", from, got, all[from])
		}
	}
	if got, _ := l.OffsetForTime(partlog.MaxTimestamp); got != linearMax(all, end) {
		t.Fatalf("max timestamp offset %d, want %d", got, linearMax(all, end))
	}
	if got, _ := l.OffsetForTime(partlog.Earliest); got != 0 {
		t.Fatalf("earliest %d", got)
	}
	if got, _ := l.OffsetForTime(partlog.Latest); got != end {
		t.Fatalf("latest %d", got)
	}
}

// readN reads up to n records from offset from.
func readN(t testing.TB, l partlog.Log, from int64, n int) []rec {
	t.Helper()
	segs, release := l.Segments()
	defer release()
	var out []rec
	for _, s := range segs {
		if s.Next <= from || len(out) >= n {
			continue
		}
		err := l.Read(s, max(from, s.Base), func(r *record.Record) bool {
			out = append(out, rec{r.Offset, r.Timestamp, string(r.Value)})
			return len(out) < n
		})
		if err != nil {
			t.Fatalf("read segment %d: %v", s.Base, err)
		}
	}
	return out
}
