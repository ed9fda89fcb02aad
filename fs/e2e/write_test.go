package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/record"
)

// TestConcurrentAppenders: 8 processes × 10,000 lines land exactly once,
// none torn, each writer's lines in its order.
func TestConcurrentAppenders(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t")
	e.Sh(`for p in $(seq 1 8); do seq -f "writer$p-line%g-padding-padding-padding" 1 10000 >> t/0/log & done; wait`)
	out := e.Sh("cat t/0/log")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 80000 {
		t.Fatalf("%d lines, want 80000", len(lines))
	}
	next := map[int]int{}
	for _, l := range lines {
		var p, n int
		if _, err := fmt.Sscanf(l, "writer%d-line%d-padding-padding-padding", &p, &n); err != nil || !strings.HasSuffix(l, "-padding-padding-padding") {
			t.Fatalf("torn line %q", l)
		}
		if n != next[p]+1 {
			t.Fatalf("writer %d: line %d after %d", p, n, next[p])
		}
		next[p] = n
	}
	for p := 1; p <= 8; p++ {
		if next[p] != 10000 {
			t.Errorf("writer %d: last line %d", p, next[p])
		}
	}
}

// TestCompressionTypeApplies: batches written after compression.type=X
// carry codec X on disk and read back the same.
func TestCompressionTypeApplies(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t")
	var want strings.Builder
	for _, codec := range []string{"gzip", "snappy", "lz4", "zstd", "none"} {
		e.Sh("echo compression.type=" + codec + " >> t/config")
		line := strings.Repeat(codec, 50)
		e.Sh("for i in 1 2 3; do echo " + line + "; done >> t/0/log")
		want.WriteString(strings.Repeat(line+"\n", 3))
	}
	if got := e.Sh("cat t/0/log"); got != want.String() {
		t.Fatalf("read back differs")
	}
	e.Unmount()
	seg := filepath.Join(e.data, "t-0", "00000000000000000000.log")
	f, err := os.Open(seg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	sc := record.NewScanner(f, 0, st.Size(), seg)
	var codecs []string
	for sc.Next() {
		c := sc.Batch().Header.Codec().String()
		if len(codecs) == 0 || codecs[len(codecs)-1] != c {
			codecs = append(codecs, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(codecs, ","); got != "gzip,snappy,lz4,zstd,none" {
		t.Fatalf("batch codecs %s", got)
	}
}
