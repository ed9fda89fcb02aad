// Package fstest is the mount-level conformance suite, in the spirit of
// go-fuse's posixtest: it mounts a partlog.Store with package fs and
// drives the mount with system calls, checking the contract of
// docs/spec.md §2 (the tree and its path forms), §3 (rendering), §4
// (writing) and §12 (consumer groups) once for every backend. Each backend
// runs it from its own test (memlog in fs, logstore and kafkalog in
// fs/e2e).
package fstest

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	pfs "github.com/partfs/partfs/fs"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
)

// Backend makes fresh stores, empty but for what consumer groups need
// (a data directory keeps commits in a __consumer_offsets topic, which
// NewGroupsTopic makes); the suite closes each after its mount is gone.
type Backend struct {
	New func(t *testing.T) partlog.Store
	// Lacks names the checks a backend is known to fail, each with why;
	// they are skipped saying so, and the list is the backend's to-do.
	Lacks map[string]string
}

// NewGroupsTopic makes st's __consumer_offsets topic, for a backend whose
// consumer groups live in the store's own partitions (memlog, logstore).
func NewGroupsTopic(t *testing.T, st partlog.Store) partlog.Store {
	t.Helper()
	if err := st.CreateTopic("__consumer_offsets"); err != nil {
		t.Fatal(err)
	}
	return st
}

// Run runs every check of the suite as a subtest.
func Run(t *testing.T, b Backend) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *Mount)
	}{
		{"Tree", CheckTree},
		{"OffsetPaths", CheckOffsetPaths},
		{"TimePaths", CheckTimePaths},
		{"Rendering", CheckRendering},
		{"ReadStopsAtOpenEnd", CheckReadStopsAtOpenEnd},
		{"AppendOnly", CheckAppendOnly},
		{"WriteLines", CheckWriteLines},
		{"WriteJSONLines", CheckWriteJSONLines},
		{"Key", CheckKey},
		{"ConfigFile", CheckConfigFile},
		{"Groups", CheckGroups},
	} {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := b.Lacks[c.name]; ok {
				t.Skip("known gap of this backend: " + why)
			}
			c.fn(t, b.mount(t))
		})
	}
}

// Mount is a store mounted by package fs on a temporary directory.
type Mount struct {
	*testutil.Mount
	t *testing.T
}

func (b Backend) mount(t *testing.T) *Mount {
	t.Helper()
	st := b.New(t)
	lg := logrus.New()
	lg.SetOutput(testWriter{t})
	fsys := pfs.New(pfs.Options{Store: st, Logger: logrus.NewEntry(lg)})
	m := testutil.NewMount(t, func(dir string) (*fuse.Server, error) {
		return fsys.Mount(dir, pfs.MountOptions{FsName: "partfs-fstest"})
	})
	m.AfterUnmount = append(m.AfterUnmount, fsys.Close, st.Close)
	return &Mount{Mount: m, t: t}
}

// testWriter sends the mount's log to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// topic makes topic name (one partition) and returns its partition 0's
// directory, relative to the mount.
func (m *Mount) topic(name string) string {
	m.t.Helper()
	if err := os.Mkdir(m.Path(name), 0o755); err != nil {
		m.t.Fatalf("mkdir %s: %v", name, err)
	}
	return name + "/0"
}

// write appends data to rel in one write(2).
func (m *Mount) write(rel, data string) {
	m.t.Helper()
	if err := m.AppendOnce(rel, data); err != nil {
		m.t.Fatalf("append %q to %s: %v", data, rel, err)
	}
}

// read returns the content of rel.
func (m *Mount) read(rel string) string {
	m.t.Helper()
	b, err := os.ReadFile(m.Path(rel))
	if err != nil {
		m.t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

// want checks that rel reads as want.
func (m *Mount) want(rel, want string) {
	m.t.Helper()
	if got := m.read(rel); got != want {
		m.t.Errorf("%s = %q, want %q", rel, got, want)
	}
}

// wantErrno checks that err is errno.
func wantErrno(t *testing.T, what string, err error, errno syscall.Errno) {
	t.Helper()
	if !errors.Is(err, errno) {
		t.Errorf("%s: %v, want %v", what, err, errno)
	}
}

// names lists directory rel.
func (m *Mount) names(rel string) []string {
	m.t.Helper()
	des, err := os.ReadDir(m.Path(rel))
	if err != nil {
		m.t.Fatalf("ls %s: %v", rel, err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func hasAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
