package vfs

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

func newBudgetOS(t *testing.T, budget int) (*BudgetFS, string) {
	t.Helper()
	return newBudgetFS(Default, budget), t.TempDir()
}

// readAll reads f whole through ReadAt.
func readAll(t *testing.T, f File) string {
	t.Helper()
	b, err := ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// createFiles creates n files holding their own names, left open.
func createFiles(t *testing.T, fs FS, dir string, n int) []File {
	t.Helper()
	var files []File
	for i := 0; i < n; i++ {
		name := filepath.Join(dir, fmt.Sprintf("f%03d", i))
		f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(name), 0); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// countFDs counts this process's open descriptors.
func countFDs(t *testing.T) int {
	t.Helper()
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(des)
}

func TestBudgetKeepsBudgetAndReopens(t *testing.T) {
	c, dir := newBudgetOS(t, 4)
	before := countFDs(t)
	files := createFiles(t, c, dir, 50)
	if got := countFDs(t) - before; got > 4 {
		t.Fatalf("%d descriptors open for 50 files, budget 4", got)
	}
	for round := 0; round < 2; round++ {
		for i, f := range files {
			if got, want := readAll(t, f), filepath.Join(dir, fmt.Sprintf("f%03d", i)); got != want {
				t.Fatalf("file %d holds %q, want %q", i, got, want)
			}
		}
	}
	s := c.Stats()
	if s.Open > 4 || s.Files != 50 || s.Reopens < 50 || s.Evictions < 50 {
		t.Fatalf("stats %+v", s)
	}
	if got := countFDs(t) - before; got > 4 {
		t.Fatalf("%d descriptors open after reading, budget 4", got)
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.Stats(); s.Open != 0 || s.Files != 0 {
		t.Fatalf("after close: %+v", s)
	}
	if got := countFDs(t) - before; got > 0 {
		t.Fatalf("%d descriptors left after closing everything", got)
	}
}

func TestBudgetReopenDropsCreateAndTrunc(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	name := filepath.Join(dir, "a")
	f, err := c.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("kept"), 0)
	other := createFiles(t, c, dir, 1)[0] // evicts a
	if got := readAll(t, f); got != "kept" {
		t.Fatalf("reopened file holds %q (truncated or recreated?)", got)
	}
	f.Close()
	other.Close()
}

func TestBudgetWriteKeepsPosition(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	f, err := c.Create(filepath.Join(dir, "w"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.OpenFile(filepath.Join(dir, "app"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"abc", "def", "gh"} {
		// each write follows an eviction: f and g take turns at the one slot
		if _, err := f.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "app"), append(testutil.ReadFile(t, filepath.Join(dir, "app")), '|'), 0o644)
	}
	f.Close()
	g.Close()
	if got := string(testutil.ReadFile(t, filepath.Join(dir, "w"))); got != "abcdefgh" {
		t.Fatalf("Write after reopen: %q", got)
	}
	if got := string(testutil.ReadFile(t, filepath.Join(dir, "app"))); got != "abc|def|gh|" {
		t.Fatalf("O_APPEND Write after reopen: %q", got)
	}
	if s := c.Stats(); s.Reopens < 4 {
		t.Fatalf("writes did not reopen: %+v", s)
	}
}

func TestBudgetRenameOfEvictedFile(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	b := filepath.Join(dir, "b")
	f := createFiles(t, c, dir, 1)[0]
	g := createFiles(t, c, mkdir(t, dir, "other"), 1)[0] // evicts f
	if err := c.Rename(f.Name(), b); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "f000")
	if got := readAll(t, f); got != want {
		t.Fatalf("after rename: %q", got)
	}
	if f.Name() != want {
		t.Fatalf("Name() = %q, want the name it was opened with", f.Name())
	}
	readAll(t, g) // evicts f again; it must reopen as b
	if _, err := f.WriteAt([]byte("X"), 0); err != nil {
		t.Fatal(err)
	}
	if got := string(testutil.ReadFile(t, b)); got[0] != 'X' {
		t.Fatalf("write after rename went elsewhere: b holds %q", got)
	}
}

func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBudgetRemoveKeepsEvictedFileReadable(t *testing.T) {
	c, dir := newBudgetOS(t, 2)
	files := createFiles(t, c, dir, 3) // f000 is evicted
	victim := files[0]
	if err := c.Remove(victim.Name()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(victim.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("name still there: %v", err)
	}
	more := createFiles(t, c, mkdir(t, dir, "more"), 10) // pressure: the pinned file stays
	if got := readAll(t, victim); got != victim.Name() {
		t.Fatalf("removed file reads %q", got)
	}
	s := c.Stats()
	if s.Pinned != 1 || s.Open != 2 {
		t.Fatalf("stats %+v, want 1 pinned, 2 open (the pinned one counts)", s)
	}
	victim.Close()
	if s := c.Stats(); s.Pinned != 0 || s.Open > 2 {
		t.Fatalf("after closing the pinned file: %+v", s)
	}
	for _, f := range append(files[1:], more...) {
		if got := readAll(t, f); got != f.Name() {
			t.Fatalf("%s reads %q", f.Name(), got)
		}
	}
}

// TestBudgetRenameOverOpenFile is the cleaner's swap: a new segment file is
// renamed over the name of an old one that readers still hold.
func TestBudgetRenameOverOpenFile(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	final, swap := filepath.Join(dir, "0.log"), filepath.Join(dir, "0.log.swap")
	old := openWith(t, c, final, "old")
	neu := openWith(t, c, swap, "new") // evicts old
	if err := c.Rename(swap, final); err != nil {
		t.Fatal(err)
	}
	createFiles(t, c, dir, 3) // pressure
	if got := readAll(t, old); got != "old" {
		t.Fatalf("replaced file reads %q", got)
	}
	if got := readAll(t, neu); got != "new" {
		t.Fatalf("renamed file reads %q", got)
	}
	// the old handle's name is gone: renaming final again must not move it
	if err := c.Rename(final, final+".deleted"); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(final + ".deleted"); err != nil {
		t.Fatal(err)
	}
	createFiles(t, c, mkdir(t, dir, "x"), 3)
	if got := readAll(t, old) + readAll(t, neu); got != "oldnew" {
		t.Fatalf("after remove: %q", got)
	}
	if s := c.Stats(); s.Pinned != 2 {
		t.Fatalf("stats %+v, want both pinned", s)
	}
}

func openWith(t *testing.T, fs FS, name, data string) File {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBudgetDirectoryRenameAndRemoveAll(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	p := mkdir(t, dir, "topic-0")
	mkdir(t, p, "sub")
	x := openWith(t, c, filepath.Join(p, "x"), "X")
	y := openWith(t, c, filepath.Join(p, "sub", "y"), "Y")
	z := openWith(t, c, filepath.Join(dir, "topic-0x"), "Z") // a sibling sharing the prefix
	q := filepath.Join(dir, "topic-0.renamed")
	if err := c.Rename(p, q); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, x) + readAll(t, y) + readAll(t, z); got != "XYZ" {
		t.Fatalf("after directory rename: %q", got)
	}
	y.WriteAt([]byte("y"), 0)
	readAll(t, x) // evict y
	if got := string(testutil.ReadFile(t, filepath.Join(q, "sub", "y"))); got != "y" {
		t.Fatalf("write after directory rename landed elsewhere: %q", got)
	}
	if err := c.RemoveAll(q); err != nil {
		t.Fatal(err)
	}
	createFiles(t, c, dir, 2)
	if got := readAll(t, x) + readAll(t, y) + readAll(t, z); got != "XyZ" {
		t.Fatalf("after RemoveAll: %q", got)
	}
	if s := c.Stats(); s.Pinned != 2 {
		t.Fatalf("stats %+v, want x and y pinned", s)
	}
}

func TestBudgetFailedRemoveUnpins(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	p := mkdir(t, dir, "d")
	f := openWith(t, c, filepath.Join(p, "x"), "X")
	if err := c.Remove(p); err == nil {
		t.Fatal("removed a non-empty directory")
	}
	createFiles(t, c, dir, 2)
	if s := c.Stats(); s.Pinned != 0 || s.Open != 1 {
		t.Fatalf("stats %+v after a failed remove", s)
	}
	if got := readAll(t, f); got != "X" {
		t.Fatalf("%q", got)
	}
}

func TestBudgetClosedHandle(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	f := createFiles(t, c, dir, 1)[0]
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
	g := createFiles(t, c, mkdir(t, dir, "g"), 2)[0] // evicted
	g.Close()
	if _, err := g.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("stat after close of an evicted file: %v", err)
	}
}

func TestBudgetReopenOfVanishedFileFails(t *testing.T) {
	c, dir := newBudgetOS(t, 1)
	f := createFiles(t, c, dir, 1)[0]
	createFiles(t, c, mkdir(t, dir, "o"), 1)
	os.Remove(f.Name()) // behind the BudgetFS's back
	_, err := f.ReadAt(make([]byte, 1), 0)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read of a vanished evicted file: %v", err)
	}
}

// TestBudgetSyncAfterReopenIsDurable uses CrashFS: data written through a
// descriptor that was then evicted is made durable by Sync on the reopened
// one.
func TestBudgetSyncAfterReopenIsDurable(t *testing.T) {
	mem := newDirFS(t)
	c := newBudgetFS(mem, 1)
	f := openWith(t, c, "/d/seg", "payload")
	mem.SyncDir("/d")
	openWith(t, c, "/d/other", "o") // evicts seg with its data unsynced
	if c.Stats().Evictions == 0 {
		t.Fatal("no eviction")
	}
	wantContents(t, mem.Crash(), "/d/seg", "", "crash before Sync")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	wantContents(t, mem.Crash(), "/d/seg", "payload", "after Sync on the reopened file")
}

// TestBudgetConcurrent runs readers, writers, renames and removes at once
// under a tiny budget (run with -race); every file keeps its contents.
func TestBudgetConcurrent(t *testing.T) {
	c, dir := newBudgetOS(t, 3)
	const workers, files, rounds = 6, 4, 1500
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- concurrentWorker(c, mkdir(t, dir, fmt.Sprintf("w%d", w)), files, rounds, rand.New(rand.NewSource(int64(w))))
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s := c.Stats(); s.Open != 0 || s.Files != 0 || s.Pinned != 0 {
		t.Fatalf("after all closed: %+v", s)
	}
}

// concurrentWorker owns dir: it writes numbered blocks to its files, moves
// the directory around, removes and recreates files, and checks that every
// handle reads what it wrote.
func concurrentWorker(c *BudgetFS, dir string, nfiles, rounds int, rng *rand.Rand) error {
	fs := make([]File, nfiles)
	want := make([][]byte, nfiles)
	for i := range fs {
		f, err := c.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			return err
		}
		fs[i] = f
	}
	cur := dir
	for r := 0; r < rounds; r++ {
		i := rng.Intn(nfiles)
		switch rng.Intn(5) {
		case 0: // move the directory
			next := fmt.Sprintf("%s.%d", dir, r)
			if err := c.Rename(cur, next); err != nil {
				return err
			}
			cur = next
		case 1: // remove a file; its handle keeps working
			if err := c.Remove(filepath.Join(cur, fmt.Sprint(i))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		default:
			block := []byte(fmt.Sprintf("<%d:%d>", i, r))
			if _, err := fs[i].WriteAt(block, int64(len(want[i]))); err != nil {
				return fmt.Errorf("round %d write %d: %w", r, i, err)
			}
			want[i] = append(want[i], block...)
		}
		j := rng.Intn(nfiles)
		buf := make([]byte, len(want[j]))
		if _, err := fs[j].ReadAt(buf, 0); err != nil && err != io.EOF {
			return fmt.Errorf("round %d read %d: %w", r, j, err)
		}
		if string(buf) != string(want[j]) {
			return fmt.Errorf("round %d: file %d reads %q, want %q", r, j, buf, want[j])
		}
	}
	for _, f := range fs {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func TestBudgetFor(t *testing.T) {
	for soft, want := range map[uint64]int{20000: 15000, 1024: 768, 512: 256, 100: 64, 1 << 40: 805306368} {
		if got := budgetFor(soft); got != want {
			t.Errorf("budgetFor(%d) = %d, want %d", soft, got, want)
		}
	}
}
