package fs

import (
	"github.com/partfs/partfs/record"
)

// kind selects one of the two rendered streams of a partition.
type kind int

const (
	plainKind kind = iota // value + "\n"; tombstones hidden
	jsonKind              // one JSON object + "\n" per record
)

func (k kind) String() string {
	if k == jsonKind {
		return "jsonl"
	}
	return "plain"
}

// render appends the rendering of r in kind k to dst. The JSON object is
// record.AppendJSON's (the one SPEC §3 rendering, shared with `partfs
// dump --json`).
func render(dst []byte, k kind, r *record.Record) []byte {
	if k == plainKind {
		if r.Value == nil {
			return dst
		}
		dst = append(dst, r.Value...)
		return append(dst, '\n')
	}
	dst = record.AppendJSON(dst, r)
	return append(dst, '\n')
}

// jsonLen is len(record.AppendJSON(nil, r)) without rendering.
func jsonLen(r *record.Record) int64 { return record.JSONLen(r) }

var pow10 = [...]int64{1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// digits is the length of strconv.FormatInt(v, 10).
func digits(v int64) int64 {
	n := int64(1)
	if v < 0 {
		if v == -v { // math.MinInt64
			return 20
		}
		n, v = 2, -v
	}
	for _, p := range pow10 {
		if v < p {
			return n
		}
		n++
	}
	return n
}
