package salvage

import (
	"testing"

	"github.com/partfs/partfs/record"
)

// FuzzKeep: whatever a segment holds, what salvage keeps is whole batches
// with valid CRCs and decodable records, offsets increasing inside the
// segment, and the skipped regions and kept bytes cover the input.
func FuzzKeep(f *testing.F) {
	var enc record.Encoder
	var seg []byte
	for i := range 3 {
		seg, _ = enc.AppendBatch(seg, int64(10+i), []record.Record{{Timestamp: 5, Key: []byte("k"), Value: []byte("value")}}, record.BatchOptions{})
	}
	f.Add(seg)
	f.Add(append(append([]byte{}, seg[:80]...), seg...))
	f.Add(append(make([]byte, 40), seg...))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &copier{res: &Result{}, next: -1}
		kept, batches := c.keep(b, segFile{base: 10, path: "fuzz.log"}, -1)
		sc := record.NewBytesScanner(kept, "kept")
		var dec record.Decoder
		n, last := 0, int64(-1)
		for sc.Next() {
			h := sc.Batch().Header
			if h.BaseOffset <= last || h.BaseOffset < 10 {
				t.Fatalf("batch at %d after %d", h.BaseOffset, last)
			}
			last = h.LastOffset()
			if err := dec.Records(sc.Batch(), func(*record.Record) bool { return true }); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if sc.Err() != nil || n != batches {
			t.Fatalf("kept %d batches, %d parse: %v", batches, n, sc.Err())
		}
		skipped := int64(0)
		for _, s := range c.res.Skips {
			skipped += s.To - s.From
		}
		if skipped+int64(len(kept)) != int64(len(b)) {
			t.Fatalf("%d skipped + %d kept != %d", skipped, len(kept), len(b))
		}
	})
}
