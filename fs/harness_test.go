package fs

import (
	"os"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"go.uber.org/goleak"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// mounted is a store mounted on a temporary directory.
type mounted struct {
	*testutil.Mount
	t    *testing.T
	fsys *FS
	log  testutil.Logger
}

func mountStore(t *testing.T, st partlog.Store) *mounted {
	t.Helper()
	return mountWith(t, Options{Store: st})
}

// mountWith mounts New(opt), logging to the mount's logger.
func mountWith(t *testing.T, opt Options) *mounted {
	t.Helper()
	m := &mounted{t: t, log: testutil.NewLogger()}
	opt.Logger = m.log.Entry
	m.fsys = New(opt)
	m.Mount = testutil.NewMount(t, func(dir string) (*fuse.Server, error) {
		return m.fsys.Mount(dir, MountOptions{FsName: "partfs-test"})
	})
	m.AfterUnmount = append(m.AfterUnmount, m.fsys.Close)
	return m
}

func mountMem(t *testing.T, opt memlog.Options) (*mounted, *memlog.Store) {
	st := memlog.New(opt)
	return mountStore(t, st), st
}

// open opens a file of the mount in this process (writes are then single
// write(2) calls).
func (m *mounted) open(rel string, flag int) *os.File {
	m.t.Helper()
	f, err := os.OpenFile(m.Path(rel), flag, 0o644)
	if err != nil {
		m.t.Fatalf("open %s: %v", rel, err)
	}
	return f
}
