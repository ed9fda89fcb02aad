package fs

import (
	"github.com/partfs/partfs/jsonl"
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
// jsonl.Append's (the one docs/spec.md §3 rendering, shared with `partfs
// dump --json`).
func render(dst []byte, k kind, r *record.Record) []byte {
	if k == plainKind {
		if r.Value == nil {
			return dst
		}
		dst = append(dst, r.Value...)
		return append(dst, '\n')
	}
	dst = jsonl.Append(dst, r)
	return append(dst, '\n')
}

// jsonLen is len(jsonl.Append(nil, r)) without rendering.
func jsonLen(r *record.Record) int64 { return jsonl.Len(r) }
