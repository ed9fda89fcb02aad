package record

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// randDelta returns a delta whose zigzag varint has 1 to 10 bytes (mostly
// 1 to 5), of either sign, often at the edge of its size.
func randDelta(rng *rand.Rand) int64 {
	n := 1 + rng.IntN(5)
	if rng.IntN(8) == 0 {
		n = 6 + rng.IntN(5)
	}
	lo, hi := uint64(0), uint64(1)<<(7*n)-1
	if n > 1 {
		lo = 1 << (7 * (n - 1))
	}
	if n == 10 {
		hi = 1<<64 - 1
	}
	var u uint64
	switch rng.IntN(3) {
	case 0:
		u = lo
	case 1:
		u = hi
	default:
		u = lo + rng.Uint64N(hi-lo)
	}
	return int64(u>>1) ^ -int64(u&1) // zigzag decoded
}

// randValueLen returns a value length around the edges that matter to
// putKeyless: its minimum and maximum, and the sizes where the value's
// or the record's length varint grows a byte.
func randValueLen(rng *rand.Rand) int {
	if rng.IntN(256) == 0 { // large ones rarely: they are slow to check
		return keylessMaxValue - 2 + rng.IntN(4)
	}
	if rng.IntN(4) == 0 {
		return 8 + rng.IntN(300)
	}
	edges := []int{0, keylessMinValue, 63, 8191 - 12, 8191}
	return max(edges[rng.IntN(len(edges))]+rng.IntN(24)-12, 0)
}

// TestPutKeylessMatchesGeneral: the two-store writer produces the bytes of
// the general one (and of encoding/binary) for every record within its
// bounds that fits the room given, refuses the others, and writes nothing
// past the record (or at all when it refuses) even where there is room.
func TestPutKeylessMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	big := make([]byte, keylessMaxValue+16)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	taken := 0
	for iter := 0; iter < 40000; iter++ {
		ts, off := randDelta(rng), randDelta(rng)
		var value []byte
		if rng.IntN(10) != 0 {
			n := randValueLen(rng)
			at := rng.IntN(len(big) - n + 1)
			value = big[at : at+n]
		}
		r := Record{Value: value}
		want, err := appendRecord(nil, &r, ts, off)
		if err != nil {
			t.Fatal(err)
		}
		room := len(want) + rng.IntN(24) - 4 // sometimes too little
		buf := bytes.Repeat([]byte{0xee}, room+16)
		n := putKeyless(buf[:room], ts, off, value)
		within := zigzag64(ts) < keylessMaxVarint && zigzag64(off) < keylessMaxVarint &&
			len(value) >= keylessMinValue && len(value) < keylessMaxValue && len(want) <= room
		if (n > 0) != within {
			t.Fatalf("ts %d off %d value %d bytes, room %d: wrote %d bytes", ts, off, len(value), room, n)
		}
		if n > 0 {
			taken++
			if !bytes.Equal(buf[:n], want) || !bytes.Equal(want, referenceRecord(nil, &r, ts, off)) {
				t.Fatalf("ts %d off %d value %d bytes:\n got % x\nwant % x", ts, off, len(value), buf[:min(n, 40)], want[:min(len(want), 40)])
			}
		}
		for _, c := range buf[n:] {
			if c != 0xee {
				t.Fatalf("ts %d off %d value %d bytes, room %d: wrote past the record", ts, off, len(value), room)
			}
		}
	}
	if taken < 5000 {
		t.Errorf("only %d records took the two-store path", taken)
	}
}

// TestAppendRecordsRandomShapes: whole records areas of random records
// (keys, headers, null and empty fields, every varint size) match the
// field-by-field reference, whichever path each record takes.
func TestAppendRecordsRandomShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	field := func() []byte {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		return bytes.Repeat([]byte{byte(rng.Uint32())}, rng.IntN(200))
	}
	for iter := 0; iter < 2000; iter++ {
		recs := make([]Record, 1+rng.IntN(20))
		base := randDelta(rng)
		for i := range recs {
			r := &recs[i]
			r.Timestamp = base + randDelta(rng)
			r.Offset = randDelta(rng)
			r.Value = field()
			if rng.IntN(3) == 0 {
				r.Key = field()
			}
			for range rng.IntN(2) * rng.IntN(4) {
				r.Headers = append(r.Headers, Header{Key: string(field()), Value: field()})
			}
		}
		deltas := offsetDeltas{keep: rng.IntN(2) == 0, base: randDelta(rng)}
		got, err := appendRecords([]byte("p"), recs, base, deltas)
		if err != nil {
			t.Fatal(err)
		}
		want := []byte("p")
		for i := range recs {
			off := int64(i)
			if deltas.keep {
				off = recs[i].Offset - deltas.base
			}
			want = referenceRecord(want, &recs[i], recs[i].Timestamp-base, off)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("iteration %d: records area differs from the reference", iter)
		}
	}
}

// TestAppendBatchTimestamps: baseTimestamp and maxTimestamp in the header
// (maxTimestamp now comes from writing the records) are the first and the
// largest record timestamp after the default, or the delete horizon and
// the append time, for every codec, with records out of order.
func TestAppendBatchTimestamps(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	var e Encoder
	for iter := 0; iter < 200; iter++ {
		recs := make([]Record, rng.IntN(12))
		for i := range recs {
			recs[i] = Record{Timestamp: int64(rng.IntN(1000)) - 100, Value: []byte("a log line")}
		}
		opt := BatchOptions{Codec: allCodecs[rng.IntN(len(allCodecs))], DefaultTimestampMs: int64(rng.IntN(2)) * 500}
		if rng.IntN(4) == 0 {
			opt.DeleteHorizonMs = 700
		}
		if rng.IntN(4) == 0 {
			opt.LogAppendTime, opt.LogAppendTimeMs = true, 9999
		}
		wantBase, wantMax := int64(-1), int64(-1)
		for i := range recs {
			ts := TimestampOf(&recs[i], opt.DefaultTimestampMs)
			if i == 0 {
				wantBase = ts
			}
			wantMax = max(wantMax, ts)
		}
		if opt.DeleteHorizonMs > 0 {
			wantBase = opt.DeleteHorizonMs
		}
		if opt.LogAppendTime {
			wantMax = opt.LogAppendTimeMs
		}
		raw, err := e.AppendBatch(nil, 10, recs, opt)
		if err != nil {
			t.Fatal(err)
		}
		s := NewBytesScanner(raw, "t")
		if !s.Next() {
			t.Fatal(s.Err())
		}
		if h := s.Batch().Header; h.BaseTimestamp != wantBase || h.MaxTimestamp != wantMax {
			t.Fatalf("%+v over %d records: base %d max %d, want %d %d", opt, len(recs), h.BaseTimestamp, h.MaxTimestamp, wantBase, wantMax)
		}
	}
}
