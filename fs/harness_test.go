package fs

import (
	"os"
	"syscall"
	"testing"
	"time"

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
	t    *testing.T
	dir  string
	fsys *FS
	log  testutil.Logger
}

func mountStore(t *testing.T, st partlog.Store) *mounted {
	t.Helper()
	testutil.NeedFUSE(t)
	m := &mounted{t: t, dir: t.TempDir(), log: testutil.NewLogger()}
	m.fsys = New(Options{Store: st, Logger: m.log.Entry})
	srv, err := m.fsys.Mount(m.dir, MountOptions{FsName: "partfs-test"})
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
			_ = syscall.Unmount(m.dir, syscall.MNT_DETACH)
		}
		srv.Wait()
		if err := m.fsys.Close(); err != nil {
			t.Errorf("close fs: %v", err)
		}
	})
	return m
}

func mountMem(t *testing.T, opt memlog.Options) (*mounted, *memlog.Store) {
	st := memlog.New(opt)
	return mountStore(t, st), st
}

// sh runs a bash script in the mount and returns its stdout; it fails the
// test on a non-zero exit.
func (m *mounted) sh(script string) string {
	m.t.Helper()
	out, err := m.try(script)
	if err != nil {
		m.t.Fatalf("%s: %v", script, err)
	}
	return out
}

// try runs a bash script in the mount; the error includes stderr. (No
// cmd.Dir: a chdir into our own mount between fork and exec would wait for
// this suspended process to answer FUSE; the script cds itself.)
func (m *mounted) try(script string) (string, error) {
	return testutil.Sh(m.dir, script, 60*time.Second)
}

func (m *mounted) path(rel string) string { return m.dir + "/" + rel }

// open opens a file of the mount in this process (writes are then single
// write(2) calls).
func (m *mounted) open(rel string, flag int) *os.File {
	m.t.Helper()
	f, err := os.OpenFile(m.path(rel), flag, 0o644)
	if err != nil {
		m.t.Fatalf("open %s: %v", rel, err)
	}
	return f
}

// appendOnce writes data with one write(2) on a fresh O_APPEND open.
func (m *mounted) appendOnce(rel, data string) error {
	f := m.open(rel, os.O_WRONLY|os.O_APPEND)
	_, err := f.Write([]byte(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
