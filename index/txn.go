package index

import (
	"encoding/binary"
	"fmt"
)

// TxnEntrySize is the size of one .txnindex entry, big-endian, no header:
//
//	+---------------+----------------+------------------+-----------------+-----------------------+
//	| version int16 | producerId i64 | firstOffset i64  | lastOffset i64  | lastStableOffset i64  |
//	+---------------+----------------+------------------+-----------------+-----------------------+
//
// A segment has a .txnindex only once an aborted transaction touched it;
// each entry is one aborted transaction. Kafka reads only the version's
// first byte, and knows version 0.
const TxnEntrySize = 34

// AbortedTxn is one .txnindex entry.
type AbortedTxn struct {
	Version          int16
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// ParseTxnIndex decodes the entries of a .txnindex file's bytes, stopping
// at an entry of an unknown version or a size that is not a whole number
// of entries (an error naming file and position; the entries before it
// are returned).
func ParseTxnIndex(b []byte, file string) ([]AbortedTxn, error) {
	out := make([]AbortedTxn, 0, len(b)/TxnEntrySize)
	for p := 0; p+TxnEntrySize <= len(b); p += TxnEntrySize {
		e := b[p : p+TxnEntrySize]
		if e[0] != 0 {
			return out, fmt.Errorf("%s: at position %d: unknown version %d", file, p, e[0])
		}
		out = append(out, AbortedTxn{
			Version:          int16(binary.BigEndian.Uint16(e)),
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		})
	}
	if len(b)%TxnEntrySize != 0 {
		return out, fmt.Errorf("%s: size %d is not a multiple of %d", file, len(b), TxnEntrySize)
	}
	return out, nil
}

// AppendTxnEntry appends the 34 bytes of e to dst.
func AppendTxnEntry(dst []byte, e AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(e.Version))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(e.LastStableOffset))
}
