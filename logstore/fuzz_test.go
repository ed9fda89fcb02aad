package logstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
	"github.com/partfs/partfs/record"
)

// FuzzOpenSegment opens arbitrary bytes as a partition's only segment (no
// index, unclean): the open never fails or panics, the segment is cut to
// its valid prefix, and every record served decodes from that prefix.
func FuzzOpenSegment(f *testing.F) {
	bins, _ := filepath.Glob(testfixtures.Dir(f) + "/*/*.bin")
	for i, bin := range bins {
		if data, err := os.ReadFile(bin); err == nil && len(data) < 20000 && i%2 == 0 {
			f.Add(data)
		}
	}
	f.Add([]byte{})
	f.Add(make([]byte, 100))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, c := writePartition("t-0", map[string][]byte{"00000000000000000000.log": data})
		st, l := openTest(t, fs, c, map[string]string{"index.interval.bytes": "64", "segment.index.bytes": "4096"})
		defer st.Close()
		valid, _ := validPrefix(data)
		segs, release := l.Segments()
		defer release()
		if segs[0].Size != valid {
			t.Fatalf("segment cut to %d bytes, valid prefix is %d", segs[0].Size, valid)
		}
		var dec record.Decoder
		want := 0
		sc := record.NewScanner(readerAt(data), 0, valid, "fz")
		for sc.Next() {
			if !sc.Batch().Header.IsControl() {
				dec.Records(sc.Batch(), func(*record.Record) bool { want++; return true })
			}
		}
		got := 0
		for _, s := range segs {
			l.Read(s, s.Base, func(*record.Record) bool { got++; return true })
		}
		if got > want {
			t.Fatalf("served %d records, the valid prefix holds %d", got, want)
		}
		l.OffsetForTime(0)
		l.Stats()
	})
}
