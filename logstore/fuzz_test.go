package logstore

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
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
	var enc record.Encoder
	below, _ := enc.AppendBatch(nil, -5, []record.Record{{Value: []byte("v")}}, record.BatchOptions{})
	below, _ = enc.AppendBatch(below, 0, []record.Record{{Value: []byte("w")}}, record.BatchOptions{})
	f.Add(below)
	f.Add(make([]byte, 100))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, c := writePartition("t-0", map[string][]byte{"00000000000000000000.log": data})
		st, err := Open("/data", testOptions(fs, c, map[string]string{"index.interval.bytes": "64", "segment.index.bytes": "4096"}))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer st.Close()
		l, err := st.Log("t", 0)
		if errors.Is(err, partlog.ErrCorrupt) && strings.Contains(err.Error(), errMisnamed.Error()) {
			checkMisnamedKept(t, fs, data)
			return
		}
		if err != nil {
			t.Fatalf("partition not opened: %v", err)
		}
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

// checkMisnamedKept asserts that a partition refused for a first batch below
// its file name was refused for a sound batch that really lies below 0, and
// that its segment still holds every byte it was given.
func checkMisnamedKept(t *testing.T, fs vfs.FS, data []byte) {
	t.Helper()
	sc := record.NewScanner(readerAt(data), 0, int64(len(data)), "fz")
	if !sc.Next() || sc.Batch().Header.BaseOffset >= 0 {
		t.Fatalf("refused as misnamed, but the first batch is not below offset 0")
	}
	f, err := fs.Open("/data/t-0/00000000000000000000.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _ := io.ReadAll(io.NewSectionReader(f, 0, int64(len(data))+1))
	if !bytes.Equal(got, data) {
		t.Fatalf("misnamed segment changed: %d bytes, was %d", len(got), len(data))
	}
}
