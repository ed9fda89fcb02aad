package position

import (
	"strings"
	"testing"

	"github.com/partfs/partfs/record"
)

// TestRenderInto: records that fit are rendered in place, the first that
// does not fit ends the fill at its boundary, and a record larger than the
// whole buffer is split and continued from cur.skip.
func TestRenderInto(t *testing.T) {
	recs := []record.Record{
		{Offset: 0, Value: []byte("aaaa")},
		{Offset: 1}, // tombstone: nothing in plain
		{Offset: 2, Value: []byte("bb")},
		{Offset: 3, Value: []byte(strings.Repeat("c", 20))},
	}
	var got []string
	cur := Cursor{}
	var buf []byte
	for cur.Off < 4 {
		dst := make([]byte, 8)
		n := 0
		for i := int(cur.Off); i < len(recs); i++ {
			var more bool
			n, buf, more = renderInto(dst, n, Plain, &recs[i], &cur, buf)
			if !more || n == len(dst) {
				break
			}
		}
		got = append(got, string(dst[:n]))
	}
	want := []string{"aaaa\nbb\n", "cccccccc", "cccccccc", "cccc\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("fills %q, want %q", got, want)
	}

	r := record.Record{Offset: 7, Timestamp: 9, Value: []byte("v\"")}
	line := string(Render(nil, JSON, &r))
	dst := make([]byte, len(line)+3)
	cur = Cursor{Off: 7}
	n, _, more := renderInto(dst, 0, JSON, &r, &cur, nil)
	if !more || string(dst[:n]) != line || cur != (Cursor{Off: 8}) {
		t.Errorf("json: %q more=%v cur=%+v, want %q", dst[:n], more, cur, line)
	}
}
