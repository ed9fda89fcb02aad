package record

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/partfs/partfs/compression"
)

// legacyMessage builds one V0/V1 message entry [offset][size][message]
// (test-only: partfs never writes legacy formats).
func legacyMessage(offset int64, magic int8, attr byte, ts int64, key, value []byte) []byte {
	msg := []byte{0, 0, 0, 0, byte(magic), attr}
	if magic == 1 {
		msg = binary.BigEndian.AppendUint64(msg, uint64(ts))
	}
	for _, f := range [][]byte{key, value} {
		if f == nil {
			msg = binary.BigEndian.AppendUint32(msg, 0xffffffff)
		} else {
			msg = binary.BigEndian.AppendUint32(msg, uint32(len(f)))
			msg = append(msg, f...)
		}
	}
	binary.BigEndian.PutUint32(msg, crc32.ChecksumIEEE(msg[4:]))
	out := binary.BigEndian.AppendUint64(nil, uint64(offset))
	out = binary.BigEndian.AppendUint32(out, uint32(len(msg)))
	return append(out, msg...)
}

// wrapper compresses inner entries into a wrapper message.
func wrapper(t testing.TB, offset int64, magic int8, codec Codec, attrExtra byte, ts int64, inner []byte) []byte {
	var c compression.Compressors
	v, err := c.Compress(nil, inner, codec)
	if err != nil {
		t.Fatal(err)
	}
	if codec == LZ4 && magic == 0 {
		v[6] = 0x1a // the broken header checksum of old writers: xxh32(magic, FLG, BD) >> 8
	}
	return legacyMessage(offset, magic, byte(codec)|attrExtra, ts, nil, v)
}

type offTs struct{ off, ts int64 }

func legacyDecode(t *testing.T, set []byte) ([]offTs, error) {
	var out []offTs
	s := NewBytesScanner(set, "legacy")
	var d Decoder
	for s.Next() {
		if err := d.Records(s.Batch(), func(r *Record) bool { out = append(out, offTs{r.Offset, r.Timestamp}); return true }); err != nil {
			return out, err
		}
	}
	return out, s.Err()
}

func TestLegacyWrappers(t *testing.T) {
	in1 := append(legacyMessage(0, 1, 0, 100, []byte("a"), []byte("1")), legacyMessage(1, 1, 0, 90, nil, []byte("2"))...)
	in0 := append(legacyMessage(5, 0, 0, 0, []byte("a"), []byte("1")), legacyMessage(6, 0, 0, 0, nil, []byte("2"))...)
	cases := []struct {
		name string
		set  []byte
		want []offTs
	}{
		{"v1 gzip relative offsets", wrapper(t, 41, 1, Gzip, 0, 100, in1), []offTs{{40, 100}, {41, 90}}},
		{"v1 log append time", wrapper(t, 41, 1, Snappy, attrLogAppendTime, 777, in1), []offTs{{40, 777}, {41, 777}}},
		{"v1 wrapper offset 0 (librdkafka)", wrapper(t, 0, 1, LZ4, 0, 100, in1), []offTs{{0, 100}, {1, 90}}},
		{"v0 lz4 broken HC, absolute offsets", wrapper(t, 6, 0, LZ4, 0, 0, in0), []offTs{{5, -1}, {6, -1}}},
		{"v0 snappy xerial", wrapper(t, 6, 0, Snappy, 0, 0, in0), []offTs{{5, -1}, {6, -1}}},
		{"v1 plain", legacyMessage(9, 1, 0, 55, nil, nil), []offTs{{9, 55}}},
	}
	for _, c := range cases {
		got, err := legacyDecode(t, c.set)
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%s: %v %v", c.name, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: record %d = %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

func TestLegacyRejects(t *testing.T) {
	inner := legacyMessage(0, 1, 0, 1, nil, []byte("x"))
	nested := wrapper(t, 0, 1, Gzip, 0, 1, inner)
	badInner := append([]byte(nil), inner...)
	badInner[len(badInner)-1] ^= 1
	cases := map[string][]byte{
		"zstd wrapper":        legacyMessage(0, 1, byte(Zstd), 1, nil, []byte("x")),
		"codec 6":             legacyMessage(0, 1, 6, 1, nil, []byte("x")),
		"null wrapper value":  legacyMessage(0, 1, byte(Gzip), 1, nil, nil),
		"nested compression":  wrapper(t, 1, 1, Gzip, 0, 1, nested),
		"inner CRC":           wrapper(t, 0, 1, Gzip, 0, 1, badInner),
		"empty wrapper":       wrapper(t, 0, 1, Gzip, 0, 1, nil),
		"garbage compression": legacyMessage(0, 1, byte(Gzip), 1, nil, []byte("not gzip")),
	}
	for name, set := range cases {
		_, err := legacyDecode(t, set)
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Pos != 0 || !strings.Contains(err.Error(), "legacy") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
