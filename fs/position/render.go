package position

import (
	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/record"
)

// Kind selects one of the two rendered streams of a partition.
type Kind int

const (
	Plain Kind = iota // value + "\n"; tombstones hidden
	JSON              // one JSON object + "\n" per record
)

func (k Kind) String() string {
	if k == JSON {
		return "jsonl"
	}
	return "plain"
}

// Render appends the rendering of r in kind k to dst. The JSON object is
// jsonl.Append's (the one docs/spec.md §3 rendering, shared with `partfs
// dump --json`).
func Render(dst []byte, k Kind, r *record.Record) []byte {
	if k == Plain {
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
