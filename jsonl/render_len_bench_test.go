package jsonl

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// oldFieldLen is fieldLen as it was before stringLen: plainASCII, then
// utf8.Valid, then a count that stops at every byte to escape. Kept as
// the baseline of BenchmarkFieldLen and as a second oracle.
func oldFieldLen(name string, v []byte) int64 {
	n := int64(len(name)) + 4
	switch {
	case v == nil:
		return n + 4
	case plainASCII(v):
		return n + int64(len(v)) + 2
	case utf8.Valid(v):
		return n + oldStringLen(unsafeString(v))
	}
	return n + 4 + int64(base64.StdEncoding.EncodedLen(len(v))) + 2
}

func oldStringLen(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); {
		i = refSkipSafe(s, i)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			n += asciiEscapes[c]
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6 - int64(size)
		}
		i += size
	}
	return n
}

// benchValues are 1,000 values of 119 bytes of each kind a log holds.
func benchValues(kind string) [][]byte {
	vs := make([][]byte, 1000)
	for i := range vs {
		var s string
		switch kind {
		case "plain":
			s = fmt.Sprintf("%010d%s", i, strings.Repeat("abcdefghij", 11))
		case "json":
			s = fmt.Sprintf(`{"n":%09d,"level":"info","msg":"request served","path":"/api/v1/items","ms":%d}`, i, i%997)
		case "utf8":
			s = fmt.Sprintf(`{"n":%d,"msg":"Grüße aus Köln — naïve café","city":"東京","tab":"a\tb"}`, i)
		}
		vs[i] = []byte((s + strings.Repeat(" ", 119))[:119])
	}
	return vs
}

// BenchmarkFieldLen measures a value's JSON length (what the filesystem
// computes for every appended record) against the count before stringLen,
// alternating rounds of 1,000 values, and reports the ratio.
func BenchmarkFieldLen(b *testing.B) {
	for _, kind := range []string{"plain", "json", "utf8"} {
		b.Run(kind, func(b *testing.B) {
			vs := benchValues(kind)
			for _, v := range vs {
				if got, want := fieldLen("value", v), oldFieldLen("value", v); got != want {
					b.Fatalf("%q: %d, the old count %d", v, got, want)
				}
			}
			var sink int64
			var cur, old time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				for _, v := range vs {
					sink += fieldLen("value", v)
				}
				t1 := time.Now()
				for _, v := range vs {
					sink += oldFieldLen("value", v)
				}
				cur, old = cur+t1.Sub(t0), old+time.Since(t1)
			}
			b.ReportMetric(float64(119*1000*b.N)/cur.Seconds()/1e6, "MB/s")
			b.ReportMetric(old.Seconds()/cur.Seconds(), "x-old")
			_ = sink
		})
	}
}

// FuzzStringLen: the one-pass count agrees with the count before it and
// with utf8.Valid.
func FuzzStringLen(f *testing.F) {
	for _, v := range benchValues("utf8")[:2] {
		f.Add(v)
	}
	f.Add([]byte("\"\\\n\r\t\x00\x1f\x7f\x80\xff\xe2\x80\xa8\xe2\x80\xa9abc"))
	f.Fuzz(func(t *testing.T, v []byte) {
		n, valid := stringLen(string(v))
		if want := oldStringLen(string(v)); n != want {
			t.Fatalf("stringLen(%q) = %d, want %d", v, n, want)
		}
		if valid != utf8.Valid(v) {
			t.Fatalf("stringLen(%q) valid = %v", v, valid)
		}
		if got, want := fieldLen("v", v), oldFieldLen("v", v); got != want {
			t.Fatalf("fieldLen(%q) = %d, want %d", v, got, want)
		}
	})
}
