package memlog

import (
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/partlogtest"
	"github.com/partfs/partfs/record"
)

// TestConformance runs the partlog conformance suite on memlog. It holds no
// transactional data, has no segment files, and nothing survives a reopen;
// retention and compaction are driven through DeleteOldest and
// CompactSealed, and a read-only store is one filled before it turns
// read-only.
func TestConformance(t *testing.T) {
	partlogtest.Run(t, partlogtest.Backend{
		New: func(t *testing.T) partlog.Store { return New(Options{}) },
		DropOldest: func(t *testing.T, st partlog.Store, l partlog.Log) {
			if l.(*Log).DeleteOldest(1) != 1 {
				t.Fatal("DeleteOldest removed nothing")
			}
		},
		ReadOnly: func(t *testing.T) partlog.Store {
			st := New(Options{})
			if err := st.CreateTopic("ro"); err != nil {
				t.Fatal(err)
			}
			l, _ := st.Log("ro", 0)
			if _, err := l.Append([]record.Record{{Value: []byte("kept")}}); err != nil {
				t.Fatal(err)
			}
			st.opt.ReadOnly = true
			return st
		},
		Rewrite: func(t *testing.T, st partlog.Store, l partlog.Log) { l.(*Log).CompactSealed(false) },
	})
}
