package record

import "testing"

// skipBeforeByPrefix is skipBefore as it was before skipSimple: one
// RecordPrefix (through prefixBefore) per record.
func skipBeforeByPrefix(data []byte, h *BatchHeader, from int64) ([]byte, int32, string) {
	i := int32(0)
	for ; i < h.NumRecords && len(data) > 0; i++ {
		size, reached, reason := prefixBefore(data, h, from)
		if reason != "" {
			return data, i, reason
		}
		if reached {
			break
		}
		data = data[size:]
	}
	return data, i, ""
}

// FuzzSkipBefore: on any records area, record count, last offset delta
// and start offset, skipBefore passes over the same records as one
// RecordPrefix per record does and says the same of a malformed one.
func FuzzSkipBefore(f *testing.F) {
	var e Encoder
	recs := logLines(20)
	for i := range recs {
		recs[i].Offset = int64(i * i)
	}
	raw, _ := e.AppendBatch(nil, 0, recs, BatchOptions{KeepOffsets: true})
	f.Add(raw[BatchHeaderSize:], int32(20), int32(361), int64(50))
	f.Add([]byte{0x0a, 0, 0, 0x0a, 1, 2, 3, 4, 5, 6, 0x0a, 0, 2, 0x02, 1, 2, 3, 4, 5}, int32(3), int32(4), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, n, last int32, from int64) {
		h := &BatchHeader{BaseOffset: 1000, NumRecords: n, LastOffsetDelta: last}
		from += 1000
		got, gi, greason := skipBefore(data, h, from)
		want, wi, wreason := skipBeforeByPrefix(data, h, from)
		if len(got) != len(want) || gi != wi || greason != wreason {
			t.Fatalf("skipBefore: %d bytes left, %d records, %q; by prefix: %d, %d, %q", len(got), gi, greason, len(want), wi, wreason)
		}
	})
}
