package position

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/partfs/partfs/record"
)

// TestMeasurePanicIsAnError: a panic while measuring, in line or aside,
// becomes an error that names the record, not a crash.
func TestMeasurePanicIsAnError(t *testing.T) {
	for _, aside := range []bool{false, true} {
		m := start(1, aside, func(m *Measurement) {
			m.note(&record.Record{Value: []byte("x")})
			panic("measuring")
		})
		if err := m.Wait(); err == nil || !strings.Contains(err.Error(), "measuring record 1: panic") {
			t.Fatalf("aside %v: error %v", aside, err)
		}
		m.Release()
	}
}

// TestMeasureLines: measuring lines, in line or aside, gives the figures
// of measuring the records made of them.
func TestMeasureLines(t *testing.T) {
	head := []byte("joined \"line\"\n")
	var body []byte
	for i := 0; len(body) < 2*MeasureAsideBytes; i++ {
		body = fmt.Appendf(body, "line %d \xff\t%s\n", i, strings.Repeat("é", i%5))
	}
	for _, b := range [][]byte{body[:40], body} {
		recs := record.AppendLineRecords(nil, head, b)
		want := Measure(recs)
		got := MeasureLines(head, b)
		if want.Wait() != nil || got.Wait() != nil || !slices.Equal(got.sums, want.sums) ||
			got.values != want.values || got.minTs != 0 || got.maxTs != 0 || len(got.sums) != len(recs) {
			t.Fatalf("%d bytes: lines measured %d records, %d value bytes; records %d, %d",
				len(b), len(got.sums), got.values, len(want.sums), want.values)
		}
		want.Release()
		got.Release()
	}
}

// TestMeasurePlainLines: lines of plain ASCII, measured from their ends
// alone, give the figures of measuring the records made of them: empty
// lines, chunks ending inside a line, a head of one line, in line and
// aside; one byte that is not plain anywhere falls back to measuring
// record by record, with the same figures.
func TestMeasurePlainLines(t *testing.T) {
	var body []byte
	for i := 0; len(body) < 2*MeasureAsideBytes; i++ {
		body = fmt.Appendf(body, "%d %s\n", i, strings.Repeat("ab", i%70))
		if i%17 == 0 {
			body = append(body, '\n')
		}
	}
	cases := [][2][]byte{
		{nil, body},
		{[]byte("held line\n"), body[:500]},
		{[]byte("\n"), append(body[:300:300], "tail without end"...)},
		{[]byte("x\n"), nil},
		{nil, []byte("no line end")},
	}
	// JSON lines: printable ASCII with quotes and backslashes, measured
	// from their ends and quote counts; quotes in a head's bytes after its
	// last line end belong to no line.
	var js []byte
	for i := 0; len(js) < 2*MeasureAsideBytes; i++ {
		js = fmt.Appendf(js, `{"n":%d,"msg":"say \"%s\"","path":"c:\\%d"}`+"\n", i, strings.Repeat("ab", i%40), i)
	}
	cases = append(cases, [2][]byte{nil, js}, [2][]byte{[]byte(`"q"` + "\n" + `"dropped \" tail`), js[:700]},
		[2][]byte{[]byte(`{"a":"\\"}` + "\n"), append(js[:200:200], `"tail \"`...)})
	for _, bad := range []byte{'"', '\\', '\t', 0x7f, 0x80, 0xff} {
		odd := slices.Clone(body)
		odd[len(odd)/2] = bad
		cases = append(cases, [2][]byte{[]byte("head\n"), odd})
	}
	for i, c := range cases {
		recs := record.AppendLineRecords(nil, c[0], c[1])
		want := Measure(recs)
		got := MeasureLines(c[0], c[1])
		if want.Wait() != nil || got.Wait() != nil || !slices.Equal(got.sums, want.sums) ||
			got.values != want.values || got.minTs != want.minTs || got.maxTs != want.maxTs {
			t.Fatalf("case %d: lines measured %d records, %d value bytes; records %d, %d",
				i, len(got.sums), got.values, len(want.sums), want.values)
		}
		want.Release()
		got.Release()
	}
}
