// Package e2e holds the end-to-end tests of the filesystem over the on-disk
// backend (logstore): real mounts driven by real shell tools. It also holds
// the tests that join packages no lower package may import together:
// logstore on vfs.BudgetFS's descriptor budget with the cleaner, keyindex
// over a logstore log across compaction, and readers of a mount while
// compact cleans its log.
package e2e

import (
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	pfs "github.com/partfs/partfs/fs"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/metrics"
	"github.com/partfs/partfs/schema"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is a logstore data directory mounted on a temporary directory.
type env struct {
	*testutil.Mount
	t    testing.TB
	data string
	st   *logstore.Store
	fsys *pfs.FS
	logs *testutil.SyncBuffer
	// codecs: of a mount with mountOpt.schemasOn
	codecs *schema.Codecs
	// closeErrOK: the store may fail to close (a full disk)
	closeErrOK bool
}

type mountOpt struct {
	readOnly      bool
	defaults      map[string]string
	noPassthrough bool // segments/ through the daemon
	noPageCache   bool // log and log.jsonl with direct I/O
	// schemas: decode schema-encoded payloads with this source (nil: the
	// store's _schemas topic); set schemasOn for either
	schemas   func(st *logstore.Store) schema.Source
	schemasOn bool
}

func newEnv(t testing.TB, o mountOpt) *env {
	return mountAt(t, t.TempDir(), o)
}

func mountAt(t testing.TB, data string, o mountOpt) *env {
	t.Helper()
	testutil.NeedFUSE(t)
	e := &env{t: t, data: data, logs: &testutil.SyncBuffer{}}
	l := logrus.New()
	l.SetOutput(e.logs)
	l.SetLevel(logrus.DebugLevel)
	lg := logrus.NewEntry(l)
	st, err := logstore.Open(data, logstore.Options{Logger: lg, ReadOnly: o.readOnly, Defaults: o.defaults, NoBackground: true, OpenInBackground: true})
	if err != nil {
		t.Fatalf("open %s: %v", data, err)
	}
	e.st = st
	opt := pfs.Options{Store: st, Logger: lg, Metrics: metrics.New(st)}
	if o.schemasOn {
		var src schema.Source = schema.NewTopic(st, func() int64 { return time.Now().UnixMilli() })
		if o.schemas != nil {
			src = o.schemas(st)
		}
		e.codecs = schema.New(schema.Options{Source: src, Logger: lg, Timeout: 2 * time.Second, Failed: opt.Metrics.SchemaFailed})
		opt.Schemas = e.codecs
	}
	e.fsys = pfs.New(opt)
	t.Cleanup(func() { // runs after the unmount when the mount fails
		if e.Mount == nil {
			_ = st.Close()
		}
	})
	e.Mount = testutil.NewMount(t, func(dir string) (*fuse.Server, error) {
		return e.fsys.Mount(dir, pfs.MountOptions{FsName: "partfs-e2e", NoPassthrough: o.noPassthrough, NoPageCache: o.noPageCache})
	})
	e.AfterUnmount = append(e.AfterUnmount, e.fsys.Close, func() error {
		if err := e.st.Close(); err != nil && !e.closeErrOK {
			return fmt.Errorf("close store: %w", err)
		}
		return nil
	})
	return e
}

// log is the store's partition p of topic.
func (e *env) log(topic string, p int) *logstore.Log {
	e.t.Helper()
	l, err := e.st.Log(topic, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

func haveTool(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}
