package compression

import (
	"encoding/binary"
	"fmt"
)

// maxDecompressed is the bound the tests decompress under: the batch
// decoder's default (record.maxDecompressed).
const maxDecompressed = 64 << 20

// logArea returns the uncompressed V2 records area of n keyless records
// of ~120-byte log lines 1 ms apart, as record's encoder writes it (the
// payload the benchmarks of package record compress).
func logArea(n int) []byte {
	levels := []string{"INFO ", "WARN ", "DEBUG", "ERROR"}
	var area, rec []byte
	for i := range n {
		line := fmt.Sprintf("2026-11-30T01:%02d:%02d.%03dZ %s [worker-%d] request handled path=/api/v1/items/%d status=%d dur_ms=%d",
			i/60000%60, i/1000%60, i%1000, levels[i%4], i%16, 100000+i*7919%900000, 200+i%3*100, i%97)
		rec = append(rec[:0], 0)                 // attributes
		rec = binary.AppendVarint(rec, int64(i)) // timestamp delta
		rec = binary.AppendVarint(rec, int64(i)) // offset delta
		rec = binary.AppendVarint(rec, -1)       // no key
		rec = binary.AppendVarint(rec, int64(len(line)))
		rec = append(rec, line...)
		rec = binary.AppendVarint(rec, 0) // no headers
		area = binary.AppendVarint(area, int64(len(rec)))
		area = append(area, rec...)
	}
	return area
}
