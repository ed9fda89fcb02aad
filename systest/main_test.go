package systest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// partfsBin is the binary built by TestMain, from builtCommit (what
// scripts/commit.sh printed; "" outside a checkout).
var partfsBin, builtCommit string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "partfs-systest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "systest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	partfsBin = filepath.Join(dir, "partfs")
	// Stamped as mount.sh stamps it, so --version names the commit.
	out, err := exec.Command("../scripts/commit.sh").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "systest: scripts/commit.sh:", err)
		return 1
	}
	builtCommit = strings.TrimSpace(string(out))
	cmd := exec.Command("go", "build", "-ldflags", "-X main.commit="+builtCommit, "-o", partfsBin, "github.com/partfs/partfs/cmd/partfs")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "systest: building partfs:", err)
		return 1
	}
	return m.Run()
}

// long reports PARTFS_SYSTEST_LONG.
func long() bool { return os.Getenv("PARTFS_SYSTEST_LONG") != "" }

// testSize is a test's size: the environment variable name if set, else
// long under PARTFS_SYSTEST_LONG, else normal.
func testSize(t testing.TB, name string, normal, long int) int {
	if os.Getenv("PARTFS_SYSTEST_LONG") != "" {
		normal = long
	}
	return envInt(t, name, normal)
}

// envInt reads a positive integer from the environment, or def.
func envInt(t testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// needRoot skips when not root (mounting a tmpfs), unless CI is set.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("needs root to mount a size-limited tmpfs")
	}
}

// runPartfs runs the binary and returns its combined output and exit code.
func runPartfs(t testing.TB, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(partfsBin, args...).CombinedOutput()
	if err == nil {
		return string(out), 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	t.Fatalf("partfs %v: %v", args, err)
	return "", -1
}

// run runs a command to its end and fails the test, with the command's
// output, where it fails.
func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

var (
	errENOTCONN     error = syscall.ENOTCONN
	errECONNABORTED error = syscall.ECONNABORTED
	errEIO          error = syscall.EIO
	errENOENT       error = syscall.ENOENT
)

// daemon is one `partfs mount` subprocess.
type daemon struct {
	t         testing.TB
	data, mnt string
	args      []string
	cmd       *exec.Cmd
	log       *testutil.SyncBuffer
	done      chan struct{}
	exitErr   error
	// relative: run from the data directory's parent with both paths
	// relative to it; nofile > 0: under that RLIMIT_NOFILE (ulimit -n)
	relative bool
	nofile   int
}

// startFresh starts a daemon on a new data directory and mount point.
func startFresh(t testing.TB, extra ...string) *daemon {
	t.Helper()
	root := t.TempDir()
	return startDaemon(t, filepath.Join(root, "data"), filepath.Join(root, "mnt"), extra...)
}

// startDaemon runs `partfs mount [extra] data mnt` and returns once the
// mount answers.
func startDaemon(t testing.TB, data, mnt string, extra ...string) *daemon {
	t.Helper()
	testutil.NeedFUSE(t)
	d := &daemon{t: t, data: data, mnt: mnt, args: extra}
	d.start()
	t.Cleanup(func() {
		if d.running() {
			d.kill9()
		}
	})
	return d
}

func (d *daemon) start() {
	d.t.Helper()
	if err := os.MkdirAll(d.mnt, 0o755); err != nil {
		d.t.Fatal(err)
	}
	args := append([]string{"mount", "--log-level", "info"}, d.args...)
	data, mnt := d.data, d.mnt
	if d.relative {
		data, mnt = filepath.Base(d.data), filepath.Base(d.mnt)
	}
	if d.data != "" { // "": the source is in the flags (--kafka)
		args = append(args, data)
	}
	args = append(args, mnt)
	d.cmd = exec.Command(partfsBin, args...)
	if d.nofile > 0 {
		d.cmd = exec.Command("sh", append([]string{"-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(d.nofile), partfsBin}, args...)...)
	}
	if d.relative {
		d.cmd.Dir = filepath.Dir(d.data)
	}
	d.log = &testutil.SyncBuffer{}
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.done = make(chan struct{})
	if err := d.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	go func() { d.exitErr = d.cmd.Wait(); close(d.done) }()
	if err := testutil.WaitServing(d.mnt, d.log, d.done); err != nil {
		if d.running() {
			d.kill9()
		}
		d.t.Fatalf("%v (exit %v):\n%s", err, d.exitErr, d.log)
	}
}

func (d *daemon) running() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// kill9 SIGKILLs the daemon and clears the dead mount.
func (d *daemon) kill9() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	// A daemon killed inside go-fuse's mount-time poll hack holds a file of
	// its own mount; its exit then waits on itself until the connection is
	// aborted.
	abortFUSE(d.mnt)
	<-d.done
	detach(d.t, d.mnt)
}

// abortFUSE aborts the FUSE connection behind mount point dir (fusectl), if
// it is mounted.
func abortFUSE(dir string) {
	conn, ok := testutil.FUSEConn(dir)
	if !ok || conn == "" {
		return
	}
	if _, err := os.Stat("/sys/fs/fuse/connections/" + conn); err != nil {
		_ = syscall.Mount("none", "/sys/fs/fuse/connections", "fusectl", 0, "")
	}
	_ = os.WriteFile("/sys/fs/fuse/connections/"+conn+"/abort", []byte("1"), 0)
}

// detach lazily unmounts a (dead) mount point; it never touches the mount
// itself (an access could hang on a mount that never answered INIT).
func detach(t testing.TB, mnt string) {
	for i := 0; testutil.IsFUSEMount(mnt); i++ {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL {
			t.Logf("umount -l %s: %v", mnt, err)
		}
		if i > 100 {
			t.Fatalf("%s is still mounted", mnt)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitLog waits until one line of the daemon's output holds all of subs
// (the output arrives through a pipe, a little after the request).
func (d *daemon) waitLog(timeout time.Duration, subs ...string) bool {
	deadline := time.Now().Add(timeout)
	for {
		for _, line := range strings.Split(d.log.String(), "\n") {
			all := true
			for _, s := range subs {
				all = all && strings.Contains(line, s)
			}
			if all {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop unmounts cleanly with umount (docs/spec.md §1: the same as SIGTERM, which
// TestSIGTERMRightAfterMount covers) and requires exit status 0.
func (d *daemon) stop() {
	d.t.Helper()
	var err error
	for i := 0; i < 50; i++ {
		if err = syscall.Unmount(d.mnt, 0); err != syscall.EBUSY {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		d.t.Logf("umount %s: %v; sending SIGTERM", d.mnt, err)
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-d.done:
	case <-time.After(60 * time.Second):
		d.kill9()
		d.t.Fatalf("partfs mount did not exit 60 s after SIGTERM:\n%s", d.log)
	}
	if d.exitErr != nil {
		d.t.Errorf("partfs mount exited with %v:\n%s", d.exitErr, tail(d.log.String(), 3000))
	}
	detach(d.t, d.mnt)
}

// restart starts the daemon again with the same arguments.
func (d *daemon) restart() {
	d.t.Helper()
	d.start()
}

// path is a path inside the mount.
func (d *daemon) path(parts ...string) string {
	return filepath.Join(append([]string{d.mnt}, parts...)...)
}

// procStats are the resource figures of the daemon process; goroutines is
// -1 unless .metrics exports go_goroutines.
type procStats struct {
	fds, threads, goroutines int
	rssKB                    int64
}

// goroutines reads go_goroutines from the mount's .metrics, or -1.
func (d *daemon) goroutines() int {
	data, err := os.ReadFile(d.path(".metrics"))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return int(n)
			}
		}
	}
	return -1
}

func (d *daemon) stats() procStats {
	d.t.Helper()
	s := procStats{goroutines: d.goroutines()}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", d.pid()))
	if err != nil {
		d.t.Fatal(err)
	}
	s.fds = len(ents)
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", d.pid()))
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "VmRSS":
			s.rssKB = n
		case "Threads":
			s.threads = int(n)
		}
	}
	return s
}

// panicked reports a Go panic or fatal error in the daemon's output.
func (d *daemon) panicked() bool {
	s := d.log.String()
	return strings.Contains(s, "panic:") || strings.Contains(s, "fatal error:")
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// mkTopic creates topic with n partitions and writes cfg lines to its config.
func mkTopic(t testing.TB, d *daemon, topic string, n int, cfg ...string) {
	t.Helper()
	if err := os.Mkdir(d.path(topic), 0o755); err != nil {
		t.Fatalf("mkdir %s: %v", topic, err)
	}
	for p := 1; p < n; p++ {
		if err := os.Mkdir(d.path(topic, strconv.Itoa(p)), 0o755); err != nil {
			t.Fatalf("mkdir %s/%d: %v", topic, p, err)
		}
	}
	if len(cfg) > 0 {
		if err := os.WriteFile(d.path(topic, "config"), []byte(strings.Join(cfg, "\n")+"\n"), 0o644); err != nil {
			t.Fatalf("config of %s: %v", topic, err)
		}
	}
}
