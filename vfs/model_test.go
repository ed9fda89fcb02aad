package vfs

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// snapshot lists every file under root with its contents ("dir/" for
// directories), relative to root.
func snapshot(t *testing.T, fs FS, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		infos, err := fs.ReadDir(dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		for _, fi := range infos {
			p := filepath.Join(dir, fi.Name())
			rel := strings.TrimPrefix(p, root)
			if fi.IsDir() {
				out[rel] = "dir/"
				walk(p)
				continue
			}
			out[rel] = contents(t, fs, p)
		}
	}
	walk(root)
	return out
}

func diff(a, b map[string]string) string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var d []string
	for _, k := range keys {
		if a[k] != b[k] {
			d = append(d, fmt.Sprintf("%s: %q vs %q", k, a[k], b[k]))
		}
	}
	return strings.Join(d, "\n")
}

// randomOps runs the same random operations on every fs under its root
// and returns the handles still open per fs.
func randomOps(t *testing.T, rng *rand.Rand, fss []FS, roots []string, n int) {
	names := []string{"a", "b", "c", "p/x", "p/y", "q/z"}
	open := make([]map[string]File, len(fss))
	for i := range open {
		open[i] = map[string]File{}
	}
	for step := 0; step < n; step++ {
		op, name, other := rng.Intn(9), names[rng.Intn(len(names))], names[rng.Intn(len(names))]
		data := []byte(fmt.Sprintf("<%d>", step))
		off := int64(rng.Intn(12))
		for i, fs := range fss {
			p, o := filepath.Join(roots[i], name), filepath.Join(roots[i], other)
			switch op {
			case 0:
				fs.MkdirAll(filepath.Dir(p), 0o755)
			case 1:
				if f, err := fs.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644); err == nil {
					if old := open[i][name]; old != nil {
						old.Close()
					}
					open[i][name] = f
				}
			case 2:
				if f := open[i][name]; f != nil {
					f.WriteAt(data, off)
				}
			case 3:
				if f := open[i][name]; f != nil {
					f.Write(data)
				}
			case 4:
				if f := open[i][name]; f != nil {
					f.Truncate(off)
				}
			case 5:
				fs.Rename(p, o)
			case 6:
				fs.Remove(p)
			case 7:
				if f := open[i][name]; f != nil {
					f.Sync()
				}
			case 8:
				fs.SyncDir(filepath.Dir(p))
			}
		}
	}
	for i := range open {
		for _, f := range open[i] {
			f.Close()
		}
	}
}

// TestCrashFSMatchesOS runs random operations on CrashFS and on the real
// filesystem and compares what they hold (the live view).
func TestCrashFSMatchesOS(t *testing.T) {
	for seed := int64(0); seed < 30; seed++ {
		dir := t.TempDir()
		mem := NewCrashFS()
		mem.MkdirAll("/r", 0o755)
		rng := rand.New(rand.NewSource(seed))
		randomOps(t, rng, []FS{mem, Default}, []string{"/r", dir}, 200)
		if d := diff(snapshot(t, mem, "/r"), snapshot(t, Default, dir)); d != "" {
			t.Fatalf("seed %d: CrashFS differs from the OS:\n%s", seed, d)
		}
	}
}

// TestCrashAfterFullSyncKeepsEverything: with every file synced and every
// directory synced, a crash loses nothing; a crash of a crash changes
// nothing.
func TestCrashAfterFullSyncKeepsEverything(t *testing.T) {
	for seed := int64(0); seed < 30; seed++ {
		mem := NewCrashFS()
		mem.MkdirAll("/r", 0o755)
		mem.SyncDir("/")
		rng := rand.New(rand.NewSource(seed))
		randomOps(t, rng, []FS{mem}, []string{"/r"}, 200)
		once := mem.Crash()
		if d := diff(snapshot(t, once, "/r"), snapshot(t, once.Crash(), "/r")); d != "" {
			t.Fatalf("seed %d: crash is not idempotent:\n%s", seed, d)
		}
		live := snapshot(t, mem, "/r")
		for p, v := range live {
			full := filepath.Join("/r", p)
			if v != "dir/" {
				f, _ := mem.OpenFile(full, os.O_RDWR, 0)
				f.Sync()
				f.Close()
			}
		}
		for p, v := range live {
			if v == "dir/" {
				mem.SyncDir(filepath.Join("/r", p))
			}
		}
		mem.SyncDir("/r")
		if d := diff(live, snapshot(t, mem.Crash(), "/r")); d != "" {
			t.Fatalf("seed %d: fully synced state lost by a crash:\n%s", seed, d)
		}
	}
}
