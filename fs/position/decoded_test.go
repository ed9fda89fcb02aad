package position

import (
	"bytes"
	"strings"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// upperDecoder decodes values that start with "d": its JSON line holds the
// value upper-cased as "v". A value starting with "dgrow" is first
// rendered past any room and then cut back (as a decoder falling back to
// the undecoded rendering does), so its bytes end up in a moved array.
type upperDecoder struct{}

func (upperDecoder) Decodes(r *record.Record) bool { return bytes.HasPrefix(r.Value, []byte("d")) }

func (d upperDecoder) Lens(r *record.Record) (plain, json int64, err error) {
	p, _ := d.Render(nil, Plain, r)
	j, _ := d.Render(nil, JSON, r)
	return int64(len(p)), int64(len(j)), nil
}

func (d upperDecoder) Render(dst []byte, k Kind, r *record.Record) ([]byte, error) {
	if k == Plain {
		return append(d.value(dst, r.Value), '\n'), nil
	}
	out, _, err := d.AppendJSON(dst, r)
	return append(out, '\n'), err
}

func (upperDecoder) value(dst, v []byte) []byte {
	if bytes.HasPrefix(v, []byte("dgrow")) {
		dst = append(dst, make([]byte, 4096)...)[:len(dst)]
	}
	return append(dst, bytes.ToUpper(v)...)
}

func (d upperDecoder) AppendJSON(dst []byte, r *record.Record) ([]byte, int, error) {
	dst = append(dst, `{"v":"`...)
	start := len(dst)
	dst = d.value(dst, r.Value)
	vlen := len(dst) - start
	return append(dst, `"}`...), vlen, nil
}

// TestDecodedRendering: records a decoder renders reach the output whole
// and in order, in place or through the scratch buffer, split where one
// alone does not fit the buffer, continued from every byte position; and
// a stream's length is the sum of the decoder's lengths (st_size equals
// what a read returns).
func TestDecodedRendering(t *testing.T) {
	st := memlog.New(memlog.Options{})
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	var recs []record.Record
	for i, v := range []string{"dab", "plain", "d" + strings.Repeat("x", 40), "dgrow-y", "dz", "", "dgrow" + strings.Repeat("q", 30), "dq"} {
		r := record.Record{Value: []byte(v)}
		if i == 5 {
			r.Value = nil
		}
		recs = append(recs, r)
	}
	if _, err := l.Append(recs); err != nil {
		t.Fatal(err)
	}
	dec := upperDecoder{}
	for _, k := range []Kind{Plain, JSON} {
		var whole []byte
		l.Read(segmentsOf(l)[0], 0, func(r *record.Record) bool {
			if dec.Decodes(r) {
				whole, _ = dec.Render(whole, k, r)
			} else {
				whole = Render(whole, k, r)
			}
			return true
		})
		ly := NewDecodingLayout(l, nil, dec)
		if end := endOf(t, ly, k); end != int64(len(whole)) {
			t.Fatalf("%s: end %d, rendering %d bytes", k, end, len(whole))
		}
		for _, size := range []int{7, 16, 33, 64, 4096} {
			for from := 0; from <= len(whole); from++ {
				cur, err := ly.Place(k, int64(from))
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(t, l, k, cur, size, dec)
				if !bytes.Equal(got, whole[from:]) {
					t.Fatalf("%s, buffer %d, from %d:\n%q\nwant\n%q", k, size, from, got, whole[from:])
				}
			}
		}
	}
}

func segmentsOf(l partlog.Log) []partlog.Segment {
	segs, release := l.Segments()
	defer release()
	return segs
}

// readAll reads k from cur to the end in buffers of size bytes, alternately
// without a flush (one ReadStream per buffer) and with one.
func readAll(t *testing.T, l partlog.Log, k Kind, cur Cursor, size int, dec Decoder) []byte {
	t.Helper()
	var got []byte
	var buf []byte
	for i := 0; cur.Off < 8; i++ {
		o := RenderOut{Dec: dec, Dst: make([]byte, size), Buf: buf}
		if i%2 == 1 {
			o.Flush = func(o *RenderOut, _ Cursor) bool {
				got = append(got, o.Dst[:o.N]...)
				o.Dst, o.N = make([]byte, size), 0
				return true
			}
		}
		if err := ReadStream(l, k, &cur, 8, &o); err != nil {
			t.Fatal(err)
		}
		got, buf = append(got, o.Dst[:o.N]...), o.Buf
		if i > 1000 {
			t.Fatal("no progress")
		}
	}
	return got
}
