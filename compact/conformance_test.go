package compact_test

import (
	"testing"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/partlogtest"
)

// TestConformanceRewrite runs the conformance suite's compaction rule on
// logstore with this package's cleaner: rewritten segments get new IDs,
// the others keep their records, each key's latest record stays, and
// Changed fires. (logstore runs the rest of the suite itself.)
func TestConformanceRewrite(t *testing.T) {
	partlogtest.CheckRewrite(t, partlogtest.Backend{
		New: func(t *testing.T) partlog.Store {
			st, err := logstore.Open(t.TempDir(), logstore.Options{Logger: testutil.NewLogger().Entry, NoBackground: true})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Rewrite: func(t *testing.T, st partlog.Store, l partlog.Log) {
			c := compact.NewCleaner(compact.Options{DedupeBufferSize: 1 << 20})
			sum, err := c.CleanAll(compact.Targets(st.(*logstore.Store), l.Topic()), true)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("cleaner: %+v", sum)
		},
	})
}
