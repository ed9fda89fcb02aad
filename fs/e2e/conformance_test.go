package e2e

import (
	"testing"
	"time"

	"github.com/partfs/partfs/fs/fstest"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/kafkalog"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
)

// TestMountConformanceLogstore runs the mount-level conformance suite on
// a logstore data directory.
func TestMountConformanceLogstore(t *testing.T) {
	fstest.Run(t, fstest.Backend{New: func(t *testing.T) partlog.Store {
		st, err := logstore.Open(t.TempDir(), logstore.Options{NoBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		return fstest.NewGroupsTopic(t, st)
	}})
}

// TestMountConformanceKafka runs the mount-level conformance suite on a
// Kafka cluster (kfake).
func TestMountConformanceKafka(t *testing.T) {
	fstest.Run(t, fstest.Backend{New: func(t *testing.T) partlog.Store {
		c := testutil.Kafka(t)
		st, err := kafkalog.Open(kafkalog.Options{Brokers: c.ListenAddrs(), Timeout: 5 * time.Second, CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}})
}
