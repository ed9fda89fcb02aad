package logstore

import (
	"encoding/binary"
	"errors"
	"math/rand"
	"os"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

const walkPath = "/data/w-0/00000000000000000000.log"

// openRaw writes data as the only segment of partition w-0 and opens the
// store (unclean: the segment is validated and indexed); it is closed and
// opened again (clean, nothing re-validated) when poke is not nil, after
// poke has changed the segment's bytes.
func openRaw(t *testing.T, data []byte, poke func(f vfs.File)) (*Store, *Log) {
	t.Helper()
	fs, c := vfs.NewCrashFS(), newClock()
	fs.MkdirAll("/data/w-0", 0o755)
	f, _ := fs.Create(walkPath)
	f.Write(data)
	f.Close()
	cfg := map[string]string{"index.interval.bytes": "100"}
	open := func() (*Store, *Log) {
		st := openTopics(t, "/data", testOptions(fs, c, cfg))
		l, err := st.Log("w", 0)
		if err != nil {
			t.Fatal(err)
		}
		return st, l
	}
	st, l := open()
	if poke == nil {
		return st, l
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := fs.OpenFile(walkPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	poke(f)
	f.Close()
	return open()
}

// walkBatches encodes one batch per element of sizes (the value sizes of
// its records) at consecutive offsets, with timestamps from ts.
func walkBatches(t testing.TB, codec record.Codec, ts func(off int64) int64, sizes ...[]int) []byte {
	t.Helper()
	var enc record.Encoder
	var out []byte
	off := int64(0)
	for _, vs := range sizes {
		rs := make([]record.Record, len(vs))
		for i, n := range vs {
			rs[i] = record.Record{Timestamp: ts(off + int64(i)), Value: make([]byte, n)}
		}
		var err error
		if out, err = enc.AppendBatch(out, off, rs, record.BatchOptions{Codec: codec}); err != nil {
			t.Fatal(err)
		}
		off += int64(len(vs))
	}
	return out
}

// checkTimes compares OffsetForTime with a linear scan for every record's
// timestamp and its neighbours.
func checkTimes(t *testing.T, l *Log) {
	t.Helper()
	all := readLog(t, l, 0)
	end := l.EndOffset()
	for _, r := range all {
		for _, ts := range []int64{r.ts - 1, r.ts, r.ts + 1} {
			got, err := l.OffsetForTime(ts)
			if want := linearOffsetForTime(all, ts, end); err != nil || got != want {
				t.Fatalf("OffsetForTime(%d) = %d %v, linear scan says %d", ts, got, err, want)
			}
		}
	}
}

func sameSizes(n, size int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

// Every record of large batches is found, whatever chunk boundary its
// prefix or body crosses, including records larger than a chunk.
func TestTimeWalkChunkBoundaries(t *testing.T) {
	mixed := sameSizes(400, 120)
	for i := 0; i < len(mixed); i += 37 {
		mixed[i] = recordChunk + i // larger than a chunk
	}
	ts := func(off int64) int64 { return 1000 + off }
	st, l := openRaw(t, walkBatches(t, record.None, ts, sameSizes(1000, 120), mixed, sameSizes(3, 2*recordChunk)), nil)
	defer st.Close()
	checkTimes(t, l)
}

// The answer in the last record of a batch, timestamps out of order
// inside batches, LogAppendTime-free CreateTime: uncompressed and
// compressed batches agree with a linear scan.
func TestTimeWalkOutOfOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	stamps := map[int64]int64{}
	ts := func(off int64) int64 {
		if _, ok := stamps[off]; !ok {
			stamps[off] = 5000 + off*10 + rng.Int63n(400) - 200
		}
		return stamps[off]
	}
	lastMax := func(off int64) int64 { // each batch of 10 has its max last
		if off%10 == 9 {
			return 1_000_000 + off
		}
		return ts(off)
	}
	for _, codec := range []record.Codec{record.None, record.LZ4, record.Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			sizes := [][]int{sameSizes(10, 50), sameSizes(10, 5), sameSizes(10, 300), sameSizes(10, 0)}
			st, l := openRaw(t, walkBatches(t, codec, ts, sizes...), nil)
			checkTimes(t, l)
			st.Close()
			st, l = openRaw(t, walkBatches(t, codec, lastMax, sizes...), nil)
			checkTimes(t, l)
			if got, err := l.OffsetForTime(1_000_000 + 19); err != nil || got != 19 {
				t.Fatalf("the last record of the second batch: %d %v", got, err)
			}
			st.Close()
		})
	}
}

// A batch with no answer (an empty batch a cleaner left, with its max
// timestamp) sends the search on to the next batch, as Kafka's does.
func TestTimeWalkSkipsBatchWithoutAnswer(t *testing.T) {
	var enc record.Encoder
	data := enc.AppendEmptyBatch(nil, 0, 9000, record.BatchOptions{})
	rs := []record.Record{{Timestamp: 100}, {Timestamp: 9500}}
	data, err := enc.AppendBatch(data, 1, rs, record.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, l := openRaw(t, data, nil)
	defer st.Close()
	if got, err := l.OffsetForTime(500); err != nil || got != 2 {
		t.Fatalf("OffsetForTime(500) = %d %v, want 2", got, err)
	}
}

// recordStarts returns the file positions of the records of the V2 batch
// at pos in data.
func recordStarts(data []byte, pos int64) []int64 {
	h, _ := record.ParseHeader(data[pos:])
	var out []int64
	for r := pos + record.BatchHeaderSize; r < pos+h.Size(); {
		out = append(out, r)
		l, n := binary.Varint(data[r:])
		r += int64(n) + l
	}
	return out
}

// A corrupt record length in the middle of a batch: targets before it are
// still answered (the walk stops at the answer); targets at or after it
// get a corruption error naming the batch, never an offset.
func TestTimeWalkCorruptLength(t *testing.T) {
	ts := func(off int64) int64 { return 1000 + off }
	data := walkBatches(t, record.None, ts, sameSizes(10, 20), sameSizes(100, 120))
	first, _ := record.ParseHeader(data)
	starts := recordStarts(data, first.Size())
	for _, c := range []struct {
		name  string
		bytes []byte
	}{
		{"negative", []byte{0x81, 0x01}},
		{"past the batch end", []byte{0xfe, 0x7f}},
		{"shorter than its fields", []byte{0x02, 0x00}},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := starts[50]
			st, l := openRaw(t, data, func(f vfs.File) { f.WriteAt(c.bytes, at) })
			defer st.Close()
			if got, err := l.OffsetForTime(1000 + 40); err != nil || got != 40 {
				t.Fatalf("before the damage: %d %v", got, err)
			}
			for _, target := range []int64{1000 + 60, 1000 + 109} {
				got, err := l.OffsetForTime(target)
				if !errors.Is(err, partlog.ErrCorrupt) || !errors.Is(err, record.ErrCorruption) {
					t.Fatalf("OffsetForTime(%d) past the damage = %d %v, want a corruption error", target, got, err)
				}
			}
		})
	}
}

// Random damage in the records of an uncompressed batch never panics and
// never gives an offset outside the batches searched: the answer is right,
// another offset of that batch (a damaged timestamp or offset delta), one
// of the next batch (the damage hid the answer), or a corruption error.
func TestTimeWalkRandomDamage(t *testing.T) {
	ts := func(off int64) int64 { return 1000 + off }
	data := walkBatches(t, record.None, ts, sameSizes(50, 30), sameSizes(50, 30), sameSizes(50, 30))
	first, _ := record.ParseHeader(data)
	starts := recordStarts(data, first.Size())
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 200; i++ {
		pos := first.Size() + record.BatchHeaderSize + rng.Int63n(first.Size()-record.BatchHeaderSize)
		if i%2 == 0 { // a length, timestamp or offset delta
			pos = starts[rng.Intn(len(starts))] + rng.Int63n(4)
		}
		b := []byte{byte(rng.Intn(256))}
		st, l := openRaw(t, data, func(f vfs.File) { f.WriteAt(b, pos) })
		target := 1000 + 50 + rng.Int63n(50)
		got, err := l.OffsetForTime(target)
		st.Close()
		if err != nil && !errors.Is(err, partlog.ErrCorrupt) {
			t.Fatalf("byte %x at %d: %v", b, pos, err)
		}
		if err == nil && (got < 50 || got >= 150) {
			t.Fatalf("byte %x at %d: OffsetForTime(%d) = %d, outside the batches searched", b, pos, target, got)
		}
	}
}

// The walk reads about as far as the answer: a target in the first
// records of a 131 KB batch in time order reads a chunk, one further in
// about up to it (the guess from the batch's timestamps) plus a margin.
func TestTimeWalkReadsUpToTheAnswer(t *testing.T) {
	st, l, n := largeBatchLog(t)
	defer st.Close()
	h := headerAt(t, st.fs, l, 0, 0)
	size := h.Size()
	rs := benchRecords(1000) // the timestamps of each of the three batches
	for _, c := range []struct {
		i   int
		max int64
	}{{5, recordChunk + headerProbe}, {500, size/2 + answerMargin + headerProbe + 1024},
		{900, size*9/10 + answerMargin + headerProbe + 1024}} {
		n.Store(0)
		if got, err := l.OffsetForTime(rs[c.i].Timestamp); err != nil || got != int64(c.i) {
			t.Fatalf("OffsetForTime = %d %v, want %d", got, err, c.i)
		}
		if read := n.Load(); read > c.max {
			t.Fatalf("a target at %d read %d bytes (batch %d)", c.i, read, size)
		}
	}
}

// FuzzTimeWalk damages the records of an uncompressed batch served after a
// clean open (nothing re-validated) and looks up a time in it: never a
// panic, and the answer is an offset of the log or a corruption error.
func FuzzTimeWalk(f *testing.F) {
	ts := func(off int64) int64 { return 1000 + off*3 }
	data := walkBatches(f, record.None, ts, sameSizes(40, 20), sameSizes(40, 200), sameSizes(2, recordChunk))
	first, _ := record.ParseHeader(data)
	f.Add(uint16(0), []byte{0xff, 0xff, 0xff}, uint16(40))
	f.Add(uint16(300), []byte{0x81}, uint16(79))
	f.Fuzz(func(t *testing.T, at uint16, damage []byte, target uint16) {
		pos := first.Size() + record.BatchHeaderSize + int64(at)
		if len(damage) == 0 || pos+int64(len(damage)) > int64(len(data)) {
			return
		}
		st, l := openRaw(t, data, func(f vfs.File) { f.WriteAt(damage, pos) })
		defer st.Close()
		got, err := l.OffsetForTime(int64(target))
		if err != nil && !errors.Is(err, partlog.ErrCorrupt) {
			t.Fatalf("%v", err)
		}
		if err == nil && (got < 0 || got > l.EndOffset()) {
			t.Fatalf("OffsetForTime(%d) = %d outside the log", target, got)
		}
	})
}
