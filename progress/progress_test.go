package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

func TestLineRateAndETA(t *testing.T) {
	c := testutil.NewClock(time.Unix(1000, 0))
	off := false
	var out bytes.Buffer
	r := Start(&out, "check", 100<<20, Options{Now: c.Now, Terminal: &off, Interval: time.Hour})
	r.Add(25 << 20)
	c.Add(time.Second)
	if got, want := r.Line(), "check: 25.0 MiB of 100.0 MiB (25%), 25.0 MiB/s, ETA 3s"; got != want {
		t.Fatalf("line = %q, want %q", got, want)
	}
	r.Done("3 segments")
	if !strings.HasSuffix(out.String(), "ETA 3s; 3 segments\n") {
		t.Fatalf("final output %q", out.String())
	}
}

func TestPlainLinesArePeriodic(t *testing.T) {
	off := false
	var mu sync.Mutex
	var out bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	r := Start(w, "compact", 0, Options{Terminal: &off, Interval: 10 * time.Millisecond})
	r.Add(2048)
	time.Sleep(60 * time.Millisecond)
	r.Done("")
	mu.Lock()
	defer mu.Unlock()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("want periodic lines plus a final one, got %q", out.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "compact: 2.0 KiB, ") || strings.Contains(l, "\r") {
			t.Fatalf("bad plain line %q", l)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 30: "3.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestUnitAndQuiet: items are counted with their unit; a job shorter than
// Quiet prints nothing, a longer one its final line.
func TestUnitAndQuiet(t *testing.T) {
	c := testutil.NewClock(time.Unix(1000, 0))
	off := false
	var out bytes.Buffer
	r := Start(&out, "closing", 10000, Options{Now: c.Now, Terminal: &off, Interval: time.Hour, Unit: "partitions", Quiet: time.Second})
	r.Add(2500)
	c.Add(500 * time.Millisecond)
	r.Done("done")
	if out.Len() != 0 {
		t.Fatalf("a job of 0.5 s printed %q", out.String())
	}
	r = Start(&out, "closing", 10000, Options{Now: c.Now, Terminal: &off, Interval: time.Hour, Unit: "partitions", Quiet: time.Second})
	r.Add(2500)
	c.Add(2 * time.Second)
	r.Done("done")
	if want := "closing: 2500 partitions of 10000 partitions (25%), 1250 partitions/s, ETA 6s; done\n"; out.String() != want {
		t.Fatalf("output %q, want %q", out.String(), want)
	}
}
