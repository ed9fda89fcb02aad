// Package e2e holds the end-to-end tests of the filesystem over the on-disk
// backend (logstore): real mounts driven by real shell tools.
package e2e

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	pfs "github.com/partfs/partfs/fs"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/metrics"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is a logstore data directory mounted on a temporary directory.
type env struct {
	t        testing.TB
	data     string
	dir      string
	st       *logstore.Store
	fsys     *pfs.FS
	srv      *fuse.Server
	logs     *testutil.SyncBuffer
	unmounts sync.Once
	// closeErrOK: the store may fail to close (a full disk)
	closeErrOK bool
}

type mountOpt struct {
	readOnly bool
	defaults map[string]string
}

func newEnv(t testing.TB, o mountOpt) *env {
	return mountAt(t, t.TempDir(), o)
}

func mountAt(t testing.TB, data string, o mountOpt) *env {
	t.Helper()
	testutil.NeedFUSE(t)
	e := &env{t: t, data: data, dir: t.TempDir(), logs: &testutil.SyncBuffer{}}
	l := logrus.New()
	l.SetOutput(e.logs)
	l.SetLevel(logrus.DebugLevel)
	lg := logrus.NewEntry(l)
	st, err := logstore.Open(data, logstore.Options{Logger: lg, ReadOnly: o.readOnly, Defaults: o.defaults, NoBackground: true})
	if err != nil {
		t.Fatalf("open %s: %v", data, err)
	}
	e.st = st
	e.fsys = pfs.New(pfs.Options{Store: st, Logger: lg, Metrics: metrics.New(st)})
	if e.srv, err = e.fsys.Mount(e.dir, pfs.MountOptions{FsName: "partfs-e2e"}); err != nil {
		_ = st.Close()
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(e.unmount)
	return e
}

// unmount unmounts and closes the store (once).
func (e *env) unmount() {
	e.unmounts.Do(func() {
		if err := e.srv.Unmount(); err != nil {
			e.t.Errorf("unmount: %v", err)
			_ = syscall.Unmount(e.dir, syscall.MNT_DETACH)
		}
		e.srv.Wait()
		if err := e.fsys.Close(); err != nil {
			e.t.Errorf("close fs: %v", err)
		}
		if err := e.st.Close(); err != nil && !e.closeErrOK {
			e.t.Errorf("close store: %v", err)
		}
	})
}

func (e *env) sh(script string) string {
	e.t.Helper()
	out, err := e.try(script)
	if err != nil {
		e.t.Fatalf("%s: %v", script, err)
	}
	return out
}

// try runs bash in the mount. (No cmd.Dir: a chdir into our own mount
// between fork and exec would wait on this suspended process.)
func (e *env) try(script string) (string, error) {
	return testutil.Sh(e.dir, script, 90*time.Second)
}

func (e *env) path(rel string) string { return e.dir + "/" + rel }

// appendOnce writes data with one write(2) on a fresh O_APPEND open.
func (e *env) appendOnce(rel, data string) error {
	f, err := os.OpenFile(e.path(rel), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func haveTool(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}
