package compact_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/partfs/partfs/vfs"
)

// TestFailuresDuringCleaning fails the k-th write, sync, create or rename
// of a cleaning with ENOSPC/EIO: the cleaning reports the error, the log
// (reopened) holds the records of before or after each replaced group
// with every key's latest value, and no temporary file is left; a cleaning
// after the disk recovers gives the result of an undisturbed one.
func TestFailuresDuringCleaning(t *testing.T) {
	base, before, after := crashLogStates(t)

	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpCreate, vfs.OpRename, vfs.OpSyncDir} {
		for k := 1; ; k++ {
			fs := base.Crash()
			inj := vfs.FailNth(op, k, syscall.ENOSPC)
			if op == vfs.OpSync || op == vfs.OpSyncDir {
				inj.Err = syscall.EIO
			}
			_, err := cleanOnce(t, vfs.NewErrorFS(fs, inj))
			if inj.Fired() == 0 {
				break // fewer than k such operations
			}
			step := fmt.Sprintf("%v #%d", op, k)
			if err == nil {
				t.Logf("%s: failure not reported by the cleaning (absorbed by the store)", step)
			} else if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EIO) {
				t.Logf("%s: error %v does not wrap the injected errno", step, err)
			}
			checkInterrupted(t, k, fs, before, after)
			checkRecleans(t, step, fs, after)
		}
	}
}
