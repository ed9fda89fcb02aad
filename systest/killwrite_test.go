package systest

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// writeLines is the text of the large write number w: 8,000 lines of 120
// bytes (960 KB, one FUSE request), each naming w and its line.
func writeLines(w int) []byte {
	var b bytes.Buffer
	for i := 0; i < 8000; i++ {
		fmt.Fprintf(&b, "w%07d l%05d %s\n", w, i, strings.Repeat("k", 104))
	}
	return b.Bytes()
}

// TestKilledDuringLargeWrites: a daemon SIGKILLed while large write()s of
// lines go to a log (written while encoded, the headers last) loses none
// of the writes it acknowledged and keeps no part of the one in flight:
// after each restart the log is the writes from the first on, each whole,
// every acknowledged one there and at most one more.
func TestKilledDuringLargeWrites(t *testing.T) {
	d := startFresh(t)
	mkTopic(t, d, "w", 1)
	rng := rand.New(rand.NewSource(16))
	next := 0 // the first write not yet known to be in the log
	for round := 0; round < 6; round++ {
		acked, writing := make(chan int, 1000), make(chan struct{})
		go func() {
			defer close(acked)
			f, err := os.OpenFile(d.path("w", "0", "log"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return
			}
			defer f.Close()
			for w := next; ; w++ {
				if _, err := f.Write(writeLines(w)); err != nil {
					return
				}
				if w == next {
					close(writing)
				}
				acked <- w
			}
		}()
		// the kill lands during the writes, however long the first one took
		select {
		case <-writing:
		case <-time.After(10 * time.Second):
		}
		time.Sleep(time.Duration(30+rng.Intn(120)) * time.Millisecond)
		d.kill9()
		last := next - 1
		for w := range acked {
			last = w
		}
		d.restart()
		got, err := os.ReadFile(d.path("w", "0", "log"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for w := 0; len(got) > 0; w++ {
			want := writeLines(w)
			if !bytes.HasPrefix(got, want) {
				t.Fatalf("round %d: the log after %d whole writes holds %.40q, not write %d whole (acknowledged up to %d)", round, w, got, w, last)
			}
			got, n = got[len(want):], w+1
		}
		if n < last+1 || n > last+2 {
			t.Fatalf("round %d: %d whole writes in the log, %d acknowledged", round, n, last+1)
		}
		t.Logf("round %d: %d writes acknowledged, %d in the log", round, last+1, n)
		next = n
	}
	if next < 6 {
		t.Fatalf("only %d writes in 6 rounds", next)
	}
}
