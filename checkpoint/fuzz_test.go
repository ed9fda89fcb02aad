package checkpoint

import (
	"testing"
	"time"
)

// FuzzOffsetsText parses arbitrary text as an offset checkpoint: no panic,
// and what parses formats back to text that parses to the same entries.
func FuzzOffsetsText(f *testing.F) {
	f.Add("0\n1\nt 0 5\n")
	f.Add("")
	f.Add("0\n2\na 1 2\nb 3 4\n")
	f.Add("0\n1\nt  0\t5\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := parseCheckpoint("f", []byte(text))
		if err != nil {
			return
		}
		m := map[TopicPartition]int64{}
		for i, e := range entries {
			tp, off, err := parseOffsetEntry("f", i+3, e)
			if err != nil {
				return
			}
			m[tp] = off
		}
		if len(m) != len(entries) {
			return // duplicate partitions collapse
		}
		again, err := parseCheckpoint("f", FormatOffsets(m))
		if err != nil || len(again) != len(m) {
			t.Fatalf("formatted text does not parse back: %v", err)
		}
	})
}

// FuzzProperties: no panic; formatted maps parse back identically.
func FuzzProperties(f *testing.F) {
	f.Add("a", "b")
	f.Add("k y", "=:#!\\\n\t é😀")
	f.Fuzz(func(t *testing.T, k, v string) {
		ParseProperties("p", []byte(k+"="+v)) //nolint:errcheck // must not panic
		text := FormatMetaProperties(map[string]string{k: v}, time.Unix(0, 0))
		back, err := ParseProperties("p", text)
		if err != nil {
			t.Fatal(err)
		}
		if !validUTF8(k) || !validUTF8(v) {
			return
		}
		if got, ok := back[k]; !ok || got != v {
			t.Fatalf("%q=%q came back as %v from %q", k, v, back, text)
		}
	})
}

func validUTF8(s string) bool {
	for _, r := range s {
		if r == 0xfffd {
			return false
		}
	}
	return true
}
