package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

var allCodecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// mixedRecords returns n records of every shape the size plan must count:
// keys, null values, headers, values of 0..maxVal bytes (random bytes, so
// they do not compress), and timestamps that go back and forth.
func mixedRecords(rng *rand.Rand, n, maxVal int, ts int64) []record.Record {
	rs := make([]record.Record, n)
	for i := range rs {
		r := &rs[i]
		r.Timestamp = ts
		if ts > 0 {
			r.Timestamp = ts + int64(rng.Intn(200_000)) - 100_000
		}
		if rng.Intn(4) > 0 {
			r.Value = make([]byte, rng.Intn(maxVal+1))
			rng.Read(r.Value)
		}
		if rng.Intn(3) == 0 {
			r.Key = []byte(fmt.Sprintf("key-%d", rng.Intn(1000)))
		}
		for h := rng.Intn(3); h > 0; h-- {
			r.Headers = append(r.Headers, record.Header{Key: "h", Value: make([]byte, rng.Intn(300))})
		}
	}
	return rs
}

// TestPlanExact checks the planned sizes against the encoder: each planned
// batch encodes (uncompressed) within the limit, the sizes add up to the
// plan's total exactly, and no batch could have taken one more record; and
// sizeBound is not below the size of all the records as one batch. Some
// records take the default timestamp.
func TestPlanExact(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var l Log
	var enc record.Encoder
	for _, limit := range []int64{200, 1000, 4096, 65536, 1048588} {
		for _, maxVal := range []int{10, 150, 3000} {
			rs := mixedRecords(rng, 2000, maxVal, 1_764_410_400_000)
			for i := range rs {
				if rng.Intn(5) == 0 {
					rs[i].Timestamp = int64(rng.Intn(2)) - 1 // 0 or -1
				}
			}
			opt := record.BatchOptions{DefaultTimestampMs: 1_764_410_450_000}
			total := l.planBatches(rs, limit, opt.DefaultTimestampMs)
			var sum int64
			start := 0
			for k, end := range l.cuts {
				b, err := enc.AppendBatch(nil, 0, rs[start:end], opt)
				if err != nil {
					t.Fatal(err)
				}
				sum += int64(len(b))
				if len(b) > int(limit) && end-start > 1 {
					t.Fatalf("limit %d: batch %d of %d records is %d bytes", limit, k, end-start, len(b))
				}
				if end < len(rs) {
					more, _ := enc.AppendBatch(nil, 0, rs[start:end+1], opt)
					if len(more) <= int(limit) {
						t.Fatalf("limit %d: batch %d cut at %d though one more record fits (%d bytes)", limit, k, end, len(more))
					}
				}
				start = end
			}
			if whole, _ := enc.AppendBatch(nil, 0, rs, opt); sizeBound(rs) < int64(len(whole)) {
				t.Fatalf("maxVal %d: size bound %d below the encoded size %d", maxVal, sizeBound(rs), len(whole))
			}
			if sum != total || start != len(rs) {
				t.Fatalf("limit %d maxVal %d: encoded %d bytes, planned %d; covered %d of %d records",
					limit, maxVal, sum, total, start, len(rs))
			}
		}
	}
}

// An uncompressed append, encoded in one pass, has the bytes and batch
// ends of the cuts planned at l.cutAt(limit), encoded batch by batch.
func TestEncodeBatchesMatchesPlan(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	var l Log
	var enc record.Encoder
	compared := 0
	defer func() {
		if compared < 9 {
			t.Fatalf("only %d of 15 cases compared", compared)
		}
	}()
	for _, limit := range []int64{200, 1000, 4096, 65536, 1048588} {
		for _, maxVal := range []int{10, 150, 3000} {
			rs := mixedRecords(rng, 1500, maxVal, 1_764_410_400_000)
			for i := range rs {
				if rng.Intn(4) == 0 {
					rs[i].Timestamp = 0
				}
			}
			opt := record.BatchOptions{DefaultTimestampMs: 1_764_410_450_000}
			l.spans = l.spans[:0]
			got, err := l.encodePlanned(nil, rs, 100, opt, limit)
			if err != nil {
				if limit <= 4096 && errors.Is(err, partlog.ErrTooLarge) {
					continue // a record too large for a batch of its own
				}
				t.Fatal(err)
			}
			l.planBatches(rs, int64(l.cutAt(limit)), opt.DefaultTimestampMs)
			var want []byte
			var ends []int
			start := 0
			for _, end := range l.cuts {
				want, _ = enc.AppendBatch(want, 100+int64(start), rs[start:end], opt)
				ends = append(ends, len(want))
				start = end
			}
			if !bytes.Equal(got, want) || fmt.Sprint(l.spans) != fmt.Sprint(ends) {
				t.Fatalf("limit %d maxVal %d: one-pass batches differ from the planned ones", limit, maxVal)
			}
			compared++
		}
	}
}

// logBatches returns the headers of every batch in the log's segment files.
func logBatches(t *testing.T, l *Log) []record.BatchHeader {
	t.Helper()
	segs, release := l.Segments()
	defer release()
	var out []record.BatchHeader
	for _, s := range segs {
		f, err := os.Open(segmentPath(l.Dir(), s.Base, kafkaname.LogSuffix))
		if err != nil {
			t.Fatal(err)
		}
		sc := record.NewScanner(f, 0, s.Size, f.Name())
		for sc.Next() {
			out = append(out, sc.Batch().Header)
		}
		f.Close()
		if sc.Err() != nil {
			t.Fatal(sc.Err())
		}
	}
	return out
}

func openDirLog(t *testing.T, cfg map[string]string) (*Store, *Log) {
	t.Helper()
	return openAt(t, t.TempDir(), Options{Now: newClock().Now, Defaults: cfg, NoBackground: true})
}

// TestAppendBatchesWithinLimit appends mixed records with every codec and
// checks that every batch on disk is within max.message.bytes, offsets are
// contiguous, and the records read back as written (timestamp 0 = now).
func TestAppendBatchesWithinLimit(t *testing.T) {
	const limit = 5000
	for _, codec := range allCodecs {
		t.Run(codec, func(t *testing.T) {
			st, l := openDirLog(t, map[string]string{"max.message.bytes": fmt.Sprint(limit), "compression.type": codec})
			defer st.Close()
			rng := rand.New(rand.NewSource(3))
			var want []record.Record
			for _, ts := range []int64{0, 1_764_410_400_000, 0} {
				rs := mixedRecords(rng, 300, 1500, ts)
				first, err := l.Append(rs)
				if err != nil || first != int64(len(want)) {
					t.Fatalf("append: first %d err %v", first, err)
				}
				want = append(want, rs...)
			}
			next := int64(0)
			for _, h := range logBatches(t, l) {
				if h.Size() > limit {
					t.Fatalf("batch at %d is %d bytes > %d", h.BaseOffset, h.Size(), limit)
				}
				if h.BaseOffset != next {
					t.Fatalf("batch base %d, want %d", h.BaseOffset, next)
				}
				next = h.LastOffset() + 1
			}
			checkRecords(t, l, want)
		})
	}
}

func checkRecords(t *testing.T, l *Log, want []record.Record) {
	t.Helper()
	got := readLog(t, l, 0)
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		ts := w.Timestamp
		if ts <= 0 {
			ts = newClock().Now().UnixMilli()
		}
		if g.off != int64(i) || g.ts != ts || g.value != string(w.Value) {
			t.Fatalf("record %d: offset %d ts %d value %d bytes; want ts %d, %d bytes",
				i, g.off, g.ts, len(g.value), ts, len(w.Value))
		}
	}
}

// TestSplitBoundaries checks where an uncompressed write is cut: records of
// 100-byte values at one timestamp are 109 bytes in the first 64 records
// of a batch (1-byte offset delta) and 110 after, so a 61+64*109+10*110 =
// 8137-byte limit takes exactly 74 records per batch.
func TestSplitBoundaries(t *testing.T) {
	st, l := openDirLog(t, map[string]string{"max.message.bytes": "8137"})
	defer st.Close()
	rs := recs(200, "b", 0)
	for i := range rs {
		rs[i].Value = make([]byte, 100)
	}
	if _, err := l.Append(rs); err != nil {
		t.Fatal(err)
	}
	var counts []int64
	for _, h := range logBatches(t, l) {
		counts = append(counts, h.LastOffset()-h.BaseOffset+1)
		if h.Size() > 8137 {
			t.Fatalf("batch %d bytes", h.Size())
		}
	}
	if fmt.Sprint(counts) != "[74 74 52]" {
		t.Fatalf("records per batch %v, want [74 74 52]", counts)
	}
}

// TestOversizedRecordRefused checks, for every codec, that a record that
// does not fit a batch alone fails the whole write with ErrTooLarge and
// leaves the log as it was.
func TestOversizedRecordRefused(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec, func(t *testing.T) {
			st, l := openDirLog(t, map[string]string{"max.message.bytes": "2000", "compression.type": codec})
			defer st.Close()
			rng := rand.New(rand.NewSource(5))
			rs := recs(50, "ok", 0)
			if _, err := l.Append(rs); err != nil {
				t.Fatal(err)
			}
			bad := recs(40, "bad", 0)
			bad[25].Value = make([]byte, 3000)
			rng.Read(bad[25].Value) // random: does not compress under the limit
			_, err := l.Append(bad)
			if !errors.Is(err, partlog.ErrTooLarge) || !strings.Contains(err.Error(), "record at offset 75 is ") ||
				strings.Contains(err.Error(), " is 0 bytes") {
				t.Fatalf("err = %v, want ErrTooLarge naming offset 75 and its size", err)
			}
			if l.EndOffset() != 50 {
				t.Fatalf("end offset %d after a refused write, want 50", l.EndOffset())
			}
			checkRecords(t, l, rs)
		})
	}
}

// TestCompressedSplit checks the compressed paths: a write over the limit
// uncompressed that compresses under it is one batch; an incompressible
// one just over the limit (the whole try fails) and one over
// wholeTryFactor times the limit (no whole try) are cut by the plan, whose
// compressSlack keeps each cut batch under the limit once framed (without
// it, gzip and snappy batches went over and were halved again).
func TestCompressedSplit(t *testing.T) {
	const limit = 4000
	cases := []struct {
		name    string
		n, size int
		random  bool
		batches int
	}{
		{"compressible", 100, 100, false, 1},
		{"incompressible-whole-tried", 60, 100, true, 2},
		{"incompressible-large", 200, 100, true, 6},
	}
	for _, codec := range allCodecs[1:] {
		for _, c := range cases {
			t.Run(codec+"/"+c.name, func(t *testing.T) {
				st, l := openDirLog(t, map[string]string{"max.message.bytes": fmt.Sprint(limit), "compression.type": codec})
				defer st.Close()
				rng := rand.New(rand.NewSource(9))
				rs := recs(c.n, "c", 0)
				for i := range rs {
					rs[i].Value = make([]byte, c.size)
					if c.random {
						rng.Read(rs[i].Value)
					}
				}
				if _, err := l.Append(rs); err != nil {
					t.Fatal(err)
				}
				hs := logBatches(t, l)
				for _, h := range hs {
					if h.Size() > limit || h.Codec().String() != codec {
						t.Fatalf("batch at %d: %d bytes, codec %v", h.BaseOffset, h.Size(), h.Codec())
					}
				}
				if len(hs) != c.batches {
					t.Fatalf("%d batches, want %d", len(hs), c.batches)
				}
				checkRecords(t, l, rs)
			})
		}
	}
}

// TestAppendLeavesCallerRecords checks that Append does not write into the
// caller's records: a timestamp of 0 (now) is still 0 afterwards, which the
// fs relies on.
func TestAppendLeavesCallerRecords(t *testing.T) {
	st, l := openDirLog(t, map[string]string{"max.message.bytes": "1000"})
	defer st.Close()
	rs := recs(50, "v", 0)
	rs[10].Timestamp = 1_764_410_000_000
	if _, err := l.Append(rs); err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		want := int64(0)
		if i == 10 {
			want = 1_764_410_000_000
		}
		if rs[i].Timestamp != want {
			t.Fatalf("record %d: timestamp %d after append, want %d", i, rs[i].Timestamp, want)
		}
	}
	checkRecords(t, l, rs)
}

func TestTooLarge(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, map[string]string{"max.message.bytes": "1000"})
	defer st.Close()
	big := recs(1, "x", 0)
	big[0].Value = make([]byte, 2000)
	if _, err := l.Append(big); !errors.Is(err, partlog.ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
	// many small records split into several batches, all appended
	rs := recs(100, "r", 0)
	for i := range rs {
		rs[i].Value = make([]byte, 50)
	}
	if _, err := l.Append(rs); err != nil {
		t.Fatal(err)
	}
	if l.EndOffset() != 100 || len(readLog(t, l, 0)) != 100 {
		t.Fatalf("end %d", l.EndOffset())
	}
}
