package logstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// AppendLines leaves the same files as Append of the records made of the
// lines, append by append: segments, rolls, indexes and checkpoints, with
// and without compression, including writes with no complete line.
func TestAppendLinesMatchesAppend(t *testing.T) {
	for _, codec := range []string{"none", "lz4"} {
		cfg := map[string]string{"segment.bytes": "20000", "index.interval.bytes": "700",
			"max.message.bytes": "3000", "compression.type": codec}
		fsA, fsB, c := vfs.NewCrashFS(), vfs.NewCrashFS(), newClock()
		stA, a := openTest(t, fsA, c, cfg)
		stB, b := openTest(t, fsB, c, cfg)
		rng := rand.New(rand.NewPCG(3, 4))
		for round := range 60 {
			var chunks [][]byte
			for range rng.IntN(3) {
				var text []byte
				for range rng.IntN(60) {
					text = fmt.Append(text, round)
					for range rng.IntN(300) {
						text = append(text, byte('0'+rng.IntN(64)))
					}
					text = append(text, '\n')
				}
				chunks = append(chunks, fmt.Appendf(text, "tail%d", rng.IntN(2)))
			}
			recs := record.AppendLineRecords(nil, chunks...)
			firstA, errA := a.Append(recs)
			firstB, n, errB := b.AppendLines(chunks...)
			if errA != nil || errB != nil || firstA != firstB || n != len(recs) {
				t.Fatalf("%s round %d: Append %d %v; AppendLines %d (%d records, want %d) %v",
					codec, round, firstA, errA, firstB, n, len(recs), errB)
			}
			c.Add(7)
		}
		stA.Close()
		stB.Close()
		// meta.properties and partition.metadata hold random ids
		if a, b := snapshotFS(t, fsA, "/data/t-0"), snapshotFS(t, fsB, "/data/t-0"); segmentsOnly(a) != segmentsOnly(b) || strings.Count(a, ".log ") < 3 {
			t.Fatalf("%s: the files differ:\n%s\nvs\n%s", codec, a, b)
		}
	}
}

// A line too large for a batch refuses the whole write and leaves the log
// as it was; a read-only log refuses AppendLines as it does Append.
func TestAppendLinesRefuses(t *testing.T) {
	for _, codec := range []string{"none", "gzip"} {
		fs, c := vfs.NewCrashFS(), newClock()
		st, l := openTest(t, fs, c, map[string]string{"max.message.bytes": "1000", "compression.type": codec})
		if _, _, err := l.AppendLines([]byte("a\nb\n")); err != nil {
			t.Fatal(err)
		}
		size := l.Stats().SizeBytes
		big, rng := []byte("ok\n"), rand.New(rand.NewPCG(1, 2))
		for range 5000 {
			big = append(big, byte('0'+rng.IntN(64))) // too much for gzip to fit
		}
		big = append(big, '\n')
		if _, n, err := l.AppendLines(big); !errors.Is(err, partlog.ErrTooLarge) || n != 0 {
			t.Fatalf("%s: %d records, err %v", codec, n, err)
		}
		if l.EndOffset() != 2 || l.Stats().SizeBytes != size {
			t.Fatalf("%s: refused write left end %d, size %d (was %d)", codec, l.EndOffset(), l.Stats().SizeBytes, size)
		}
		if first, n, err := l.AppendLines([]byte("no line end"), nil); err != nil || first != 2 || n != 0 || l.EndOffset() != 2 {
			t.Fatalf("%s: no lines: %d %d %v", codec, first, n, err)
		}
		st.Close()
	}
	fs, c := vfs.NewCrashFS(), newClock()
	st, _ := openTest(t, fs, c, nil)
	st.Close()
	opt := testOptions(fs, c, nil)
	opt.ReadOnly = true
	st, err := Open("/data", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _ := st.Log("t", 0)
	if _, _, err := l.AppendLines([]byte("x\n")); !errors.Is(err, partlog.ErrReadOnly) {
		t.Fatalf("read-only: %v", err)
	}
}

var _ partlog.LineAppender = (*Log)(nil)

// segmentsOnly drops partition.metadata from a snapshotFS listing.
func segmentsOnly(snapshot string) string {
	var keep []string
	for _, line := range strings.Split(snapshot, "\n") {
		if !strings.HasPrefix(line, "partition.metadata ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
