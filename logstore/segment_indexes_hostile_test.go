package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// TestHostileIndexesMatchLinearScan damages the .index and .timeindex of
// a log's segments (written by a clean shutdown, so they are loaded as
// they are) in the ways a file from elsewhere could be: entries shuffled,
// positions past the segment or inside a batch, a length that is not a
// whole number of entries, offsets decreasing, random bytes. Reads from
// every offset and time lookups must still give what a linear scan of the
// records gives.
func TestHostileIndexesMatchLinearScan(t *testing.T) {
	damages := map[string]func(rng *rand.Rand, b []byte, es, size int) []byte{
		"shuffled": func(rng *rand.Rand, b []byte, es, _ int) []byte {
			return shuffleEntries(rng, b, es)
		},
		"positions past the segment": func(rng *rand.Rand, b []byte, es, size int) []byte {
			if es == 8 {
				for i := 4; i+4 <= len(b); i += 8 {
					binary.BigEndian.PutUint32(b[i:], uint32(size+rng.Intn(1<<20)))
				}
			}
			return b
		},
		"positions inside batches": func(rng *rand.Rand, b []byte, es, _ int) []byte {
			if es == 8 {
				for i := 4; i+4 <= len(b); i += 8 {
					binary.BigEndian.PutUint32(b[i:], binary.BigEndian.Uint32(b[i:])+uint32(1+rng.Intn(30)))
				}
			}
			return b
		},
		"partial entry": func(rng *rand.Rand, b []byte, es, _ int) []byte {
			return append(b, byte(rng.Intn(256)), 0xff, 0x7f)
		},
		"offsets decreasing": func(rng *rand.Rand, b []byte, es, _ int) []byte {
			at := map[int]int{8: 0, 12: 8}[es] // the relative offset
			for i := 0; i+es <= len(b); i += es {
				binary.BigEndian.PutUint32(b[i+at:], uint32(len(b)/es-i/es))
			}
			return b
		},
		"random bytes": func(rng *rand.Rand, b []byte, es, _ int) []byte {
			for i := range b {
				b[i] = byte(rng.Intn(256))
			}
			return b
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			fs, c := vfs.NewCrashFS(), newClock()
			cfg := map[string]string{"segment.bytes": "15000", "index.interval.bytes": "300"}
			st, l := openTest(t, fs, c, cfg)
			rng := rand.New(rand.NewSource(int64(len(name))))
			ts := appendOutOfOrder(t, l, rng, 400, false)
			all, end := readLog(t, l, 0), l.EndOffset()
			bases := segmentBases(l)
			if len(bases) < 3 {
				t.Fatalf("only %d segments", len(bases))
			}
			sizes := map[int64]int{}
			segs, release := l.Segments()
			for _, s := range segs {
				sizes[s.Base] = int(s.Size)
			}
			release()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			for _, base := range bases {
				for suffix, es := range map[string]int{kafkaname.IndexSuffix: 8, kafkaname.TimeIndexSuffix: 12} {
					mutate(t, fs, segmentPath("/data/t-0", base, suffix), func(b []byte) []byte {
						return damage(rng, b, es, sizes[base])
					})
				}
			}
			st, l = openTest(t, fs, c, cfg)
			defer st.Close()
			for from := int64(0); from < end; from++ {
				if got := readN(t, l, from, 2); len(got) == 0 || got[0] != all[from] {
					t.Fatalf("read from %d: %v, want %v", from, got, all[from])
				}
			}
			for i := 0; i < 400; i++ {
				q := 1_000_000 - 2000 + rng.Int63n(ts-1_000_000+4000)
				if got, err := l.OffsetForTime(q); err != nil || got != linearOffsetForTime(all, q, end) {
					t.Fatalf("OffsetForTime(%d) = %d %v, linear scan says %d", q, got, err, linearOffsetForTime(all, q, end))
				}
			}
		})
	}
}

// shuffleEntries permutes the entries of es bytes of b.
func shuffleEntries(rng *rand.Rand, b []byte, es int) []byte {
	out := append([]byte(nil), b...)
	for i, j := range rng.Perm(len(b) / es) {
		copy(out[i*es:(i+1)*es], b[j*es:(j+1)*es])
	}
	return out
}

// TestCorruptLocatedBatchNoRebuild: a batch whose CRC fails where the
// index says it is fails the read with EIO naming that batch's position, and is
// no reason to rebuild the index (the linear scan finds it in the same
// place); an index entry pointing elsewhere still schedules a rebuild.
func TestCorruptLocatedBatchNoRebuild(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	cfg := map[string]string{"index.interval.bytes": "300"}
	st, l := openTest(t, fs, c, cfg)
	for i := 0; i < 40; i++ {
		if _, err := l.Append(recs(5, fmt.Sprint(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	// a batch an index entry points at, past the first
	var target, pos int64
	var seg partlog.Segment
	for target = 100; target < 200; target++ {
		var err error
		if seg, pos, err = l.Locate(target); err != nil {
			t.Fatal(err)
		}
		if s := l.segs[0]; pos > 0 && s.positionFor(target, seg.Size) == pos {
			break
		}
	}
	if target == 200 {
		t.Fatal("no batch at an index entry")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	mutate(t, fs, segmentPath("/data/t-0", seg.Base, kafkaname.LogSuffix), func(b []byte) []byte {
		b[pos+record.BatchHeaderSize+3] ^= 0x40 // a record byte: the header still parses
		return b
	})
	st, l = openTest(t, fs, c, cfg)
	defer st.Close()
	err := l.Read(seg, target, func(*record.Record) bool { return true })
	var ce *record.CorruptionError
	if !errors.As(err, &ce) || ce.Pos != pos || !errors.Is(err, partlog.ErrCorrupt) {
		t.Fatalf("read from %d: %v, want a corruption at %d", target, err, pos)
	}
	if n := len(l.rebuild); n != 0 {
		t.Fatalf("%d index rebuilds scheduled for a corrupt batch the index found", n)
	}
	for _, from := range []int64{0, 7, 60} { // scans that reach the batch
		if err := l.Read(seg, from, func(*record.Record) bool { return true }); !errors.As(err, &ce) || ce.Pos != pos {
			t.Fatalf("read from %d: %v, want a corruption at %d", from, err, pos)
		}
	}
	if n := len(l.rebuild); n != 0 {
		t.Fatalf("%d index rebuilds scheduled", n)
	}
}
