package compact_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/vfs"
)

// childEnv names the data directory a helper process cleans (slowly, with
// the I/O throttle) until the test kills it with SIGKILL.
const childEnv = "PARTFS_COMPACT_KILL_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(cleanChild(dir))
	}
	os.Exit(m.Run())
}

func cleanChild(dir string) int {
	st, err := openAt(vfs.Default, dir)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	fmt.Println("ready")
	c := compact.NewCleaner(compact.Options{Now: now, DedupeBufferSize: 1 << 16,
		Throttle: compact.NewThrottle(300<<10, nil, nil)})
	if _, err := c.CleanAll(compact.Targets(st), false); err != nil {
		fmt.Println("clean:", err)
		return 1
	}
	st.Close()
	fmt.Println("done")
	return 0
}

// TestKill9DuringCleaning kills a process that is cleaning a real data
// directory (SIGKILL, at random moments), then reopens it: the records lie
// between before and after the cleaning, every key's latest value is
// there, no temporary file is left, and cleaning again gives the result of
// an uninterrupted cleaning.
func TestKill9DuringCleaning(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base")
	buildLog(t, vfs.Default, base, 1200)
	before, _ := stateAt(t, vfs.Default, base)

	ref := filepath.Join(t.TempDir(), "ref")
	copyTree(t, base, ref)
	if _, err := cleanAt(vfs.Default, ref); err != nil {
		t.Fatal(err)
	}
	after, _ := stateAt(t, vfs.Default, ref)

	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i := 0; i < 4; i++ {
		work := filepath.Join(t.TempDir(), fmt.Sprint("run", i))
		copyTree(t, base, work)
		delay := time.Duration(20+rng.Intn(600)) * time.Millisecond
		killDuringClean(t, work, delay)
		got, names := stateAt(t, vfs.Default, work)
		noTempFiles(t, i, names)
		checkBetween(t, i, got, before, after)
		if _, err := cleanAt(vfs.Default, work); err != nil {
			t.Fatal(err)
		}
		if again, _ := stateAt(t, vfs.Default, work); fmt.Sprint(again) != fmt.Sprint(after) {
			t.Fatalf("run %d (killed after %v): cleaning after recovery differs from a clean run", i, delay)
		}
		t.Logf("killed after %v: %d records on reopen (before %d, after %d)", delay, len(got), len(before), len(after))
	}
}

func killDuringClean(t *testing.T, dir string, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	time.Sleep(delay)
	cmd.Process.Kill() // SIGKILL
	go io.Copy(io.Discard, out)
	cmd.Wait()
}

func copyTree(t *testing.T, from, to string) { copyTreeB(t, from, to) }

func copyTreeB(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if fi.Name() == ".lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}
