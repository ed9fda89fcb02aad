package fs

import (
	"strings"
	"testing"

	"github.com/partfs/partfs/record"
)

func BenchmarkRenderJSON(b *testing.B) {
	r := &record.Record{Offset: 123456789, Timestamp: 1764410400000, Value: []byte("line-" + strings.Repeat("0", 114))}
	buf := record.AppendJSON(nil, r)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		buf = record.AppendJSON(buf[:0], r)
	}
}
