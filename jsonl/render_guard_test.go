//go:build linux

package jsonl

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// TestJSONStringGuardPages renders and measures strings of every length
// 0..200 that end exactly at the end of a mapped page followed by an
// inaccessible one, or start right after one (as a value decoded from a
// mapped segment may), with and without the SSSE3 escaper: any read
// outside the string faults, and the output must be the reference's.
func TestJSONStringGuardPages(t *testing.T) {
	p := testutil.GuardedPage(t)
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("abcdefgh \"\\\n\t\x01\x7f\xc3\xa9\xe2\x80\xa8\xff")
	for _, on := range []bool{true, false} {
		withEscapeSSSE3(on, func() {
			for n := 0; n <= 200; n++ {
				for _, b := range [][]byte{p[len(p)-n:], p[:n:n]} {
					for trial := 0; trial < 4; trial++ {
						for i := range b {
							b[i] = alphabet[rng.IntN(len(alphabet))]
							if trial == 0 {
								b[i] = 'a' + byte(i%26)
							}
						}
						s := unsafeString(b)
						want := refAppendJSONString(nil, s)
						for _, room := range []int{3, 8*n + 64} {
							if got := AppendString(make([]byte, 0, room), s); !bytes.Equal(got, want) {
								t.Fatalf("ssse3 %v, room %d, %q: %q, want %q", on, room, b, got, want)
							}
						}
						if n, _ := stringLen(s); n != int64(len(want)) {
							t.Fatalf("stringLen(%q) = %d, want %d", b, n, len(want))
						}
					}
				}
			}
		})
	}
}
