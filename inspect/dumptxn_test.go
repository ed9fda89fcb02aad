package inspect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/index"
)

// TestDumpTxnIndex: each aborted transaction of a .txnindex is one line
// (or JSON object); a torn last entry is an error after the whole ones.
func TestDumpTxnIndex(t *testing.T) {
	file := filepath.Join(t.TempDir(), "00000000000000000000.txnindex")
	b := index.AppendTxnEntry(nil, index.AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 9, LastStableOffset: 3})
	b = index.AppendTxnEntry(b, index.AbortedTxn{ProducerID: 1 << 40, FirstOffset: 12, LastOffset: 20, LastStableOffset: 10})
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := DumpTxnIndex(&out, file, DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "version: 0 producerId: 7 firstOffset: 3 lastOffset: 9 lastStableOffset: 3\n" +
		"version: 0 producerId: 1099511627776 firstOffset: 12 lastOffset: 20 lastStableOffset: 10\n"
	if out.String() != want {
		t.Errorf("text dump:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := DumpTxnIndex(&out, file, DumpOptions{JSON: true}); err != nil ||
		!strings.HasPrefix(out.String(), `{"version":0,"producer_id":7,"first_offset":3,"last_offset":9,"last_stable_offset":3}`+"\n") {
		t.Errorf("json dump (%v):\n%s", err, out.String())
	}
	if err := os.WriteFile(file, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := DumpTxnIndex(&out, file, DumpOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a multiple of 34") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("torn entry: %v\n%s", err, out.String())
	}
}
