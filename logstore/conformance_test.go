package logstore

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/partlogtest"
	"github.com/partfs/partfs/record"
)

// conformanceBackend opens stores on temporary directories of the real
// filesystem, so that SegmentFiler reports real blocks, their partitions
// opened in the background as a mount opens them.
func conformanceBackend() partlogtest.Backend {
	open := func(t *testing.T, dir string, readOnly bool) partlog.Store {
		t.Helper()
		st, err := Open(dir, Options{Logger: testutil.NewLogger().Entry, NoBackground: true, ReadOnly: readOnly, OpenInBackground: true})
		if err != nil {
			t.Fatalf("open %s: %v", dir, err)
		}
		return st
	}
	return partlogtest.Backend{
		New: func(t *testing.T) partlog.Store { return open(t, t.TempDir(), false) },
		Reopen: func(t *testing.T, st partlog.Store) partlog.Store {
			dir := st.(*Store).Dir()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, dir, false)
		},
		ReadOnly: func(t *testing.T) partlog.Store {
			dir := t.TempDir()
			st := open(t, dir, false)
			if err := st.CreateTopic("ro"); err != nil {
				t.Fatal(err)
			}
			l, _ := st.Partition("ro", 0)
			if _, err := l.Append([]record.Record{{Value: []byte("kept")}}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			return open(t, dir, true)
		},
		Transactions: func(t *testing.T) partlog.Store {
			dir := t.TempDir()
			part := filepath.Join(dir, "txn-0")
			if err := os.MkdirAll(part, 0o755); err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, filepath.Join(part, "00000000000000000000.log"), txnSegment(t))
			testutil.WriteFile(t, filepath.Join(part, "00000000000000000000.txnindex"), index.AppendTxnEntry(nil, index.AbortedTxn{ProducerID: 7, FirstOffset: 2, LastOffset: 4, LastStableOffset: 2}))
			return open(t, dir, false)
		},
		DropOldest: func(t *testing.T, st partlog.Store, l partlog.Log) {
			// retention.bytes = everything but the oldest segment deletes
			// exactly that one (Kafka deletes while size - segment >= limit).
			snap, release := l.Segments()
			var total int64
			for _, s := range snap {
				total += s.Size
			}
			release()
			if err := st.SetTopicConfig(l.Topic(), []partlog.KV{{Key: "retention.bytes", Value: strconv.FormatInt(total-snap[0].Size, 10)}}); err != nil {
				t.Fatal(err)
			}
			if n, err := l.(*Log).ApplyRetention(); n != 1 || err != nil {
				t.Fatalf("ApplyRetention deleted %d segments: %v", n, err)
			}
		},
	}
}

// TestConformance runs the partlog conformance suite on logstore.
// Compaction (Rewrite) is run from package compact, which owns it.
func TestConformance(t *testing.T) {
	partlogtest.Run(t, conformanceBackend())
}
