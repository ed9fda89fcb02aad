package fs

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
)

func seqText(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func smallSegments(t *testing.T, st *memlog.Store, topic string) {
	t.Helper()
	if err := st.SetTopicConfig(topic, []partlog.KV{{Key: "segment.bytes", Value: "2000"}}); err != nil {
		t.Fatal(err)
	}
}

func TestRandomPositionsDdAndTailC(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t")
	smallSegments(t, st, "t")
	m.Sh("seq 1 20000 >> t/0/log")
	want := seqText(1, 20000)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		p := rng.Intn(len(want) - 30)
		got := m.Sh(fmt.Sprintf("dd if=t/0/log bs=1 skip=%d count=25 status=none", p))
		if got != want[p:p+25] {
			t.Fatalf("dd skip=%d = %q, want %q", p, got, want[p:p+25])
		}
	}
	if got := m.Sh("tail -c 100 t/0/log"); got != want[len(want)-100:] {
		t.Fatalf("tail -c 100 = %q", got)
	}
	// The same in the JSON stream, against a full read.
	full := m.Sh("cat t/0/log.jsonl")
	for i := 0; i < 10; i++ {
		p := rng.Intn(len(full) - 30)
		got := m.Sh(fmt.Sprintf("dd if=t/0/log.jsonl bs=1 skip=%d count=25 status=none", p))
		if got != full[p:p+25] {
			t.Fatalf("jsonl dd skip=%d = %q, want %q", p, got, full[p:p+25])
		}
	}
}

func TestPositionsSurviveRetention(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t")
	smallSegments(t, st, "t")
	m.Sh("for i in $(seq 1 30); do seq $((i*100-99)) $((i*100)) >> t/0/log; done")
	l, _ := st.Log("t", 0)
	f := m.follow("-n +1 -s 0.1 -f t/0/log")
	for i := 1; i <= 3000; i++ {
		f.expect(t, fmt.Sprintf("%d\n", i), 5*time.Second)
	}
	before := m.Sh("stat -c %s t/0/log")
	tailBefore := m.Sh("tail -c 50 t/0/log")
	if n := l.DeleteOldest(5); n != 5 {
		t.Fatalf("deleted %d segments", n)
	}
	if got := m.Sh("stat -c %s t/0/log"); got != before {
		t.Fatalf("size after retention %s, before %s", got, before)
	}
	if got := m.Sh("tail -c 50 t/0/log"); got != tailBefore {
		t.Fatalf("tail -c after retention %q, before %q", got, tailBefore)
	}
	m.Sh("seq 3001 3100 >> t/0/log")
	for i := 3001; i <= 3100; i++ {
		f.expect(t, fmt.Sprintf("%d\n", i), 5*time.Second)
	}
	first := l.StartOffset()
	if got := m.Sh("head -1 t/0/log"); got != fmt.Sprintf("%d\n", first+1) {
		t.Fatalf("head after retention %q, log start %d", got, first)
	}
	if s := f.errs.String(); s != "" {
		t.Fatalf("tail complained: %s", s)
	}
}

func TestSequentialReaderAcrossCompaction(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t")
	smallSegments(t, st, "t")
	var in strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&in, `{"key":"k%d","value":"v%d"}`+"\n", i%50, i)
	}
	if err := m.AppendOnce("t/0/log.jsonl", in.String()); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	l.Roll()
	sizeBefore := m.Sh("stat -c %s t/0/log")
	f := m.open("t/0/log", os.O_RDONLY)
	defer f.Close()
	head := make([]byte, 3000)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	l.CompactSealed(false)
	rest, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(head)+string(rest), "\n"), "\n")
	seen := map[string]bool{}
	last := -1
	for _, v := range got {
		var n int
		if _, err := fmt.Sscanf(v, "v%d", &n); err != nil || seen[v] || n <= last {
			t.Fatalf("bad, repeated or out-of-order line %q after %d", v, last)
		}
		seen[v], last = true, n
	}
	if last != 1999 {
		t.Fatalf("last line v%d", last)
	}
	if got := m.Sh("stat -c %s t/0/log"); got != sizeBefore {
		t.Fatalf("size after compaction %s, before %s", got, sizeBefore)
	}
	if got := m.Sh("wc -l < t/0/log"); got != "50\n" {
		t.Fatalf("after compaction %s lines, want 50", got)
	}
	if got := m.Sh("head -1 t/0/@offset/0"); got != "v1950\n" {
		t.Fatalf("@offset/0 after compaction starts %q", got)
	}
}
