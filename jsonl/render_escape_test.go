package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/partfs/partfs/internal/benchutil"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/record"
)

// checkJSONString: AppendString(dst, s), with and without the SSSE3
// blocks, is refAppendJSONString's bytes after dst, jsonStringLen is its
// length, and it decodes back to s when s is valid UTF-8.
func checkJSONString(t *testing.T, s string) {
	t.Helper()
	want := refAppendJSONString([]byte("pre"), s)
	for _, sse := range []bool{useEscapeSSSE3, false} {
		withEscapeSSSE3(sse, func() {
			for _, backing := range jsonStringDsts(s) {
				dst := inBacking(backing)
				if got := AppendString(dst, s); !bytes.Equal(got, want) {
					t.Fatalf("AppendString(cap %d, %q), SSSE3 %v\n got %q\nwant %q", cap(dst), s, sse, got, want)
				}
				if !canaryKept(backing) {
					t.Fatalf("AppendString(cap %d, %q), SSSE3 %v wrote past cap", cap(dst), s, sse)
				}
				got, valid := appendValidJSONString(dst, s)
				if valid != utf8.ValidString(s) || valid && !bytes.Equal(got, want) || !valid && !bytes.Equal(got, dst) || !canaryKept(backing) {
					t.Fatalf("appendValidJSONString(cap %d, %q), SSSE3 %v = %q, %v", cap(dst), s, sse, got, valid)
				}
				got, valid = AppendValidString(dst, []byte(s))
				if valid != utf8.ValidString(s) || valid && !bytes.Equal(got, want) || !valid && !bytes.Equal(got, dst) || !canaryKept(backing) {
					t.Fatalf("AppendValidString(cap %d, %q), SSSE3 %v = %q, %v", cap(dst), s, sse, got, valid)
				}
			}
		})
	}
	if n := jsonStringLen(s); n != int64(len(want)-3) {
		t.Fatalf("jsonStringLen(%q) = %d, rendered %d", s, n, len(want)-3)
	}
	if utf8.ValidString(s) {
		var back string
		if err := json.Unmarshal(want[3:], &back); err != nil || back != s {
			t.Fatalf("%q -> %s decodes to %q, %v", s, want[3:], back, err)
		}
	}
}

// withEscapeSSSE3 runs fn with useEscapeSSSE3 set to on.
func withEscapeSSSE3(on bool, fn func()) {
	was := useEscapeSSSE3
	useEscapeSSSE3 = on
	defer func() { useEscapeSSSE3 = was }()
	fn()
}

// TestAppendJSONStringMixed: strings of every length up to 200 drawn from
// bytes of each class, denser and sparser, seeded.
func TestAppendJSONStringMixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{`a"`, `ab"\`, "abcdefgh\"\x01", "abc\n\té", "a\"\xff\xe2\x80\xa8", "abcdefghijklmnopqrstuvwxyz\""}
	var b []byte
	for n := range 200 {
		for _, alpha := range alphabets {
			for range 20 {
				b = b[:0]
				for range n {
					b = append(b, alpha[rng.IntN(len(alpha))])
				}
				checkJSONString(t, string(b))
			}
		}
	}
}

// jsonStringDsts returns destinations holding "pre" with every kind of
// room: none, exactly the result, a little more, and the worst case; each
// is followed, beyond its capacity, by canary bytes that must stay.
func jsonStringDsts(s string) [][]byte {
	exact := 3 + int(jsonStringLen(s))
	var dsts [][]byte
	for _, c := range []int{3, exact, exact + 7, exact + wordRoom, 3 + maxEscape*len(s) + 2, 3 + maxEscape*len(s) + 2 + wordRoom} {
		backing := bytes.Repeat([]byte{canary}, c+64)
		copy(backing, "pre")
		dsts = append(dsts, backing)
	}
	return dsts
}

const canary = 0xa5

// inBacking is the destination in backing: "pre", and capacity up to the
// canary bytes.
func inBacking(backing []byte) []byte { return backing[: 3 : len(backing)-64] }

// canaryKept reports whether the bytes past the destination are still
// canary.
func canaryKept(backing []byte) bool {
	past := backing[len(backing)-64:]
	return bytes.Count(past, []byte{canary}) == len(past)
}

// TestAppendJSONStringClasses: each escape class alone, in runs, and at
// every position of strings whose length is not a multiple of 8.
func TestAppendJSONStringClasses(t *testing.T) {
	specials := []string{`"`, `\`, "\n", "\r", "\t", "\x00", "\x01", "\x08", "\x0c", "\x1f",
		"\x7f", " ", "é", "€", "😀", "\u2028", "\u2029", "\ufffd", "\u2027", "\u202a",
		"\xff", "\x80", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf",
		"\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xe2\x80\xa8\xe2\x80\xa9"}
	for _, sp := range specials {
		for n := 0; n <= 3*wordRoom; n++ {
			for _, at := range []int{0, n / 3, n / 2, n} {
				checkJSONString(t, strings.Repeat("a", at)+sp+strings.Repeat("b", n-at))
			}
			checkJSONString(t, strings.Repeat(sp, n))
		}
	}
}

// TestAppendJSONStringUTF8: every lead byte with every second byte and a
// few third and fourth bytes, in the word loop and in the tail.
func TestAppendJSONStringUTF8(t *testing.T) {
	more := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xa8, 0xa9, 0xbf, 0xc0, 0xff}
	dst := make([]byte, 0, 256)
	for c := 0x80; c < 0x100; c++ {
		for c1 := range 0x100 {
			for _, c2 := range more {
				for _, c3 := range []byte{0x41, 0x80, 0xbf, 0xc0} {
					seq := string([]byte{byte(c), byte(c1), c2, c3})
					for _, s := range []string{"abcdefg" + seq + "hijklmnop", "abcdefghijk" + seq} {
						if got, want := AppendString(dst, s), refAppendJSONString(nil, s); !bytes.Equal(got, want) {
							t.Fatalf("%q: got %q, want %q", s, got, want)
						}
					}
				}
			}
		}
	}
}

// TestAppendJSONStringRoom: the result is written in place whenever it fits
// cap(dst), and dst's bytes are kept.
func TestAppendJSONStringRoom(t *testing.T) {
	line := `{"n":000000001,"level":"info","msg":"request served","path":"/api/v1/items","ms":1}` + strings.Repeat(" ", 35)
	for _, s := range []string{"", "x", line, strings.Repeat("\x01é\xff", 40)} {
		for _, backing := range jsonStringDsts(s) {
			dst := inBacking(backing)
			got := AppendString(dst, s)
			if fits := len(got) <= cap(dst); fits != (&got[0] == &dst[:1][0]) {
				t.Errorf("%q into cap %d: result of %d bytes, in place %v", s, cap(dst), len(got), !fits)
			}
		}
	}
}

// TestAppendJSONInPlace: Append into a buffer with room for exactly
// Len bytes writes there, whatever the value (the filesystem counts on
// it: a rendering that fits its buffer must be in it).
func TestAppendJSONInPlace(t *testing.T) {
	values := []string{"", "plain", `{"q":"x"}`, "\xff\x00 binary \x80", strings.Repeat("\xfe", 100), "é\u2028" + strings.Repeat("\"", 50) + "\xff"}
	for _, v := range values {
		r := record.Record{Key: []byte(v), Value: []byte(v), Headers: []record.Header{{Key: "h", Value: []byte(v)}}}
		for _, extra := range []int{0, 1, 40, 6*len(v) + 80} {
			dst := make([]byte, 0, Len(&r)+int64(extra))
			out := Append(dst, &r)
			if int64(len(out)) != Len(&r) || &out[:1][0] != &dst[:1][0] {
				t.Errorf("value %q, %d spare: %d bytes (Len %d), in place %v", v, extra, len(out), Len(&r), &out[:1][0] == &dst[:1][0])
			}
			if want := refAppendJSON(&r); !bytes.Equal(out, want) {
				t.Errorf("value %q:\n got %s\nwant %s", v, out, want)
			}
		}
	}
}

// FuzzAppendJSONString: the writer agrees byte for byte with the
// reference, whatever the room in dst.
func FuzzAppendJSONString(f *testing.F) {
	f.Add(`{"n":000000001,"level":"info","msg":"request served","path":"/api/v1/items","ms":1}`)
	f.Add("line with \"quotes\", \\ and \n\t\x01 \u2028 é \u2029\xff\xe2\x80")
	f.Add(strings.Repeat("\x00\"\\é", 20))
	f.Fuzz(func(t *testing.T, s string) {
		checkJSONString(t, s)
	})
}

// jsonStringInputs are the benchmarks' strings: about 1 MiB of each kind.
func jsonStringInputs() []struct {
	name  string
	lines []string
} {
	gen := func(f func(i int) string) (lines []string) {
		for n, i := 0, 0; n < 1<<20; i++ {
			lines = append(lines, f(i))
			n += len(lines[i])
		}
		return lines
	}
	pad := func(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len(s))) }
	return []struct {
		name  string
		lines []string
	}{
		{"plain", gen(func(i int) string { return pad(fmt.Sprintf("%010dabcdefghijklmnopqrstuvwxyz", i), 119) })},
		{"plain4k", gen(func(i int) string { return pad(fmt.Sprintf("%010d", i), 4096) })},
		{"jsonline", gen(func(i int) string {
			return pad(fmt.Sprintf(`{"n":%09d,"level":"info","msg":"request served","path":"/api/v1/items","ms":%d}`, i, i%1000), 119)
		})},
		{"jsonutf8", gen(func(i int) string {
			return pad(fmt.Sprintf(`{"n":%09d,"level":"info","msg":"requête servie","path":"/api/v1/items","ms":%d}`, i, i%1000), 119)
		})},
		{"escapes", gen(func(i int) string { return pad(fmt.Sprintf("%d\"\\\n\t\x01\"\"\\\"", i), 64) })},
		{"utf8", gen(func(i int) string { return pad(fmt.Sprintf("%d Grüße, naïve café — 東京 😀 ", i), 119) })},
	}
}

// BenchmarkAppendJSONString renders each kind of string with the writer
// and with the reference (the baseline), alternating, and reports both
// speeds and their ratio.
func BenchmarkAppendJSONString(b *testing.B) {
	for _, in := range jsonStringInputs() {
		b.Run(in.name, func(b *testing.B) {
			n := 0
			for _, s := range in.lines {
				n += len(s)
			}
			buf := make([]byte, 0, 8<<20)
			run := func(f func([]byte, string) []byte) func() {
				return func() {
					buf = buf[:0]
					for _, s := range in.lines {
						buf = f(buf, s)
					}
				}
			}
			benchutil.RunPair(b, n, run(AppendString), run(refAppendJSONString))
		})
	}
}

// TestJSONStringGuardPages renders and measures strings of every length
// 0..200 that end exactly at the end of a mapped page followed by an
// inaccessible one, or start right after one (as a value decoded from a
// mapped segment may), with and without the SSSE3 escaper: any read
// outside the string faults, and the output must be the reference's.
func TestJSONStringGuardPages(t *testing.T) {
	edges := testutil.GuardedSlices(t, 200)
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("abcdefgh \"\\\n\t\x01\x7f\xc3\xa9\xe2\x80\xa8\xff")
	for _, on := range []bool{true, false} {
		withEscapeSSSE3(on, func() {
			for b := range edges {
				for trial := 0; trial < 4; trial++ {
					for i := range b {
						b[i] = alphabet[rng.IntN(len(alphabet))]
						if trial == 0 {
							b[i] = 'a' + byte(i%26)
						}
					}
					s := unsafeString(b)
					want := refAppendJSONString(nil, s)
					for _, room := range []int{3, 8*len(b) + 64} {
						if got := AppendString(make([]byte, 0, room), s); !bytes.Equal(got, want) {
							t.Fatalf("ssse3 %v, room %d, %q: %q, want %q", on, room, b, got, want)
						}
					}
					if n, _ := stringLen(s); n != int64(len(want)) {
						t.Fatalf("stringLen(%q) = %d, want %d", b, n, len(want))
					}
				}
			}
		})
	}
}
