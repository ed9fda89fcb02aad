package compact

import (
	"testing"

	"github.com/partfs/partfs/record"
)

// FuzzFilter feeds arbitrary bytes to the batch filter: it must never
// panic, and whatever it writes must scan and decode as valid batches.
func FuzzFilter(f *testing.F) {
	var e record.Encoder
	for _, codec := range codecs {
		b, _ := e.AppendBatch(nil, 5, toRecords([]kv{{5, 1, "a", "1"}, {6, 2, "", "x"}, {7, 3, "a", "<nil>"}}), record.BatchOptions{Codec: codec})
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _ := NewOffsetMap(24*101, 0.9)
		m.Put([]byte("a"), 6)
		fl := newFilter(m, 100)
		s := record.NewBytesScanner(data, "fuzz")
		var out []byte
		for s.Next() {
			var err error
			if out, err = fl.batch(out, s.Batch()); err != nil {
				return
			}
		}
		sc := record.NewBytesScanner(out, "out")
		var dec record.Decoder
		for sc.Next() {
			if err := dec.Records(sc.Batch(), func(*record.Record) bool { return true }); err != nil {
				t.Fatalf("filter output does not decode: %v", err)
			}
		}
		if sc.Err() != nil {
			t.Fatalf("filter output does not scan: %v", sc.Err())
		}
	})
}
