package systest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchesPerWrite: the complete lines of one write() through the mount
// are one record batch (docs/spec.md §4); with --batch-bytes 65536 they are cut
// into batches of at most 64 KiB. Either way the log reads back the lines.
func TestBatchesPerWrite(t *testing.T) {
	var text strings.Builder
	for i := 0; i < 7000; i++ {
		fmt.Fprintf(&text, "%099d\n", i)
	}
	for _, tc := range []struct {
		flags    []string
		min, max int
	}{{nil, 1, 1}, {[]string{"--batch-bytes", "65536"}, 11, 14}} {
		d := startFresh(t, tc.flags...)
		mkTopic(t, d, "b", 1)
		f := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(f, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		d.sh("dd if=" + f + " of=b/0/log bs=1M oflag=append conv=notrunc status=none")
		if got := d.sh("cat b/0/log"); got != text.String() {
			t.Fatalf("flags %v: cat log: %d bytes, want %d", tc.flags, len(got), text.Len())
		}
		d.stop()
		out, code := runPartfs(t, "dump", "--json", filepath.Join(d.data, "b-0", "00000000000000000000.log"))
		if code != 0 {
			t.Fatalf("dump: exit %d: %s", code, out)
		}
		batches := map[int64]int{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				BatchOffset *int64 `json:"batch_offset"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil || r.BatchOffset == nil {
				t.Fatalf("dump line %q: %v", line, err)
			}
			batches[*r.BatchOffset]++
		}
		if n := len(batches); n < tc.min || n > tc.max {
			t.Fatalf("flags %v: one write() of 7,000 lines made %d batches, want %d to %d", tc.flags, n, tc.min, tc.max)
		}
	}
}
