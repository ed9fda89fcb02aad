package fs_test

import (
	"testing"

	"github.com/partfs/partfs/fs/fstest"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
)

// TestMountConformance runs the mount-level conformance suite on memlog.
func TestMountConformance(t *testing.T) {
	fstest.Run(t, fstest.Backend{New: func(t *testing.T) partlog.Store { return fstest.NewGroupsTopic(t, memlog.New(memlog.Options{})) }})
}
