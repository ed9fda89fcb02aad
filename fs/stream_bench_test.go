package fs

import (
	"strings"
	"testing"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog/partlogtest"
	"github.com/partfs/partfs/record"
)

// BenchmarkStreamPlain and BenchmarkStreamJSON render a 64 MiB on-disk log
// of ~120-byte lines (batches as `cat >> log` makes them) through a stream,
// as a sequential reader's read-ahead does (bytes per op = the rendering).
func BenchmarkStreamPlain(b *testing.B) { benchStream(b, position.Plain) }

func BenchmarkStreamJSON(b *testing.B) { benchStream(b, position.JSON) }

func benchStream(b *testing.B, k position.Kind) {
	st, err := logstore.Open(b.TempDir(), logstore.Options{NoBackground: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	l := partlogtest.NewLog(b, st, "t")
	recs := make([]record.Record, (1<<20)/120)
	for i := range recs {
		recs[i].Value = []byte("line-" + strings.Repeat("0", 114))
	}
	for n := 0; n < 64; n++ {
		if _, err := l.Append(recs); err != nil {
			b.Fatal(err)
		}
	}
	size, per := 0, recordsPerChunk(l, k)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := startStream(l, nil, k, position.Cursor{}, l.EndOffset(), per)
		size = 0
		for c := s.next(); c != nil; c = s.next() {
			size += len(c.data)
			c.unref()
		}
		s.stop()
	}
	b.SetBytes(int64(size))
}
