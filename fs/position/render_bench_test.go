package position

import (
	"strings"
	"testing"

	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/record"
)

func BenchmarkRenderJSON(b *testing.B) {
	r := &record.Record{Offset: 123456789, Timestamp: 1764410400000, Value: []byte("line-" + strings.Repeat("0", 114))}
	buf := jsonl.Append(nil, r)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		buf = jsonl.Append(buf[:0], r)
	}
}
