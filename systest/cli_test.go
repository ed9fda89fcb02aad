package systest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// TestHelpOnStdout: --help of partfs and of every command goes to stdout
// with exit 0 (`partfs mount --help | less` shows it); --version prints
// one line naming the commit the binary was built from.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"mount", "--help"}, {"dump", "--help"},
		{"check", "--help"}, {"compact", "--help"}, {"dev-cluster", "--help"}, {"mount", "-h"}} {
		stdout, stderr, code := runPartfsSplit(args...)
		if code != 0 || !strings.Contains(stdout, "usage: partfs") || stderr != "" {
			t.Errorf("partfs %v: exit %d, %d bytes on stdout, stderr %q", args, code, len(stdout), stderr)
		}
	}
	if stdout, stderr, code := runPartfsSplit("--version"); code != 0 || !strings.HasPrefix(stdout, "partfs ") || strings.Count(stdout, "\n") != 1 || stderr != "" ||
		builtCommit != "" && !strings.Contains(stdout, " commit "+builtCommit+" ") {
		t.Errorf("partfs --version: exit %d, %q %q (built from %q)", code, stdout, stderr, builtCommit)
	}
}

// TestRefusalsOneLine: a command line partfs refuses gets one line saying
// what is wrong and at most a hint, on stderr, nothing on stdout, exit 2;
// `dump` of an empty file is an error (exit 1), said once.
func TestRefusalsOneLine(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		code  int
		first string
	}{
		{nil, 2, "partfs: no command given"},
		{[]string{"frobnicate"}, 2, `partfs: unknown command "frobnicate"`},
		{[]string{"check"}, 2, "partfs check: missing DATADIR"},
		{[]string{"check", "--nosuch", dir}, 2, "partfs check: flag provided but not defined: -nosuch"},
		{[]string{"check", dir, "extra"}, 2, `partfs check: unexpected argument "extra" (want DATADIR)`},
		{[]string{"dump"}, 2, "partfs dump: missing FILE"},
		{[]string{"compact"}, 2, "partfs compact: missing DATADIR"},
		{[]string{"salvage", dir}, 2, "partfs salvage: missing DST"},
		{[]string{"mount", dir}, 2, "partfs mount: missing MOUNTPOINT"},
		{[]string{"mount", dir, dir, "--log-level", "loud"}, 2, "partfs mount: --log-level: not a valid logrus Level"},
		{[]string{"mount", "--kafka", "127.0.0.1:1", dir, dir}, 2, `partfs mount: unexpected argument`},
		{[]string{"dev-cluster", "x"}, 2, `partfs dev-cluster: unexpected argument "x"`},
		{[]string{"dump", empty}, 1, "partfs dump: " + empty + " is empty (0 bytes): nothing to dump"},
	} {
		stdout, stderr, code := runPartfsSplit(tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != tc.code || stdout != "" || len(lines) > 2 || !strings.HasPrefix(lines[0], tc.first) {
			t.Errorf("partfs %q: exit %d (want %d), stdout %q, stderr %q", tc.args, code, tc.code, stdout, stderr)
		}
		if len(lines) == 2 && !strings.HasPrefix(lines[1], "Run 'partfs ") {
			t.Errorf("partfs %q: second line %q is no hint", tc.args, lines[1])
		}
	}
}

// TestFlagsAfterPaths: `partfs mount DATADIR MOUNTPOINT --read-only`
// mounts read-only, as with the flag first.
func TestFlagsAfterPaths(t *testing.T) {
	testutil.NeedFUSE(t)
	dir := t.TempDir()
	data, mnt := filepath.Join(dir, "data"), filepath.Join(dir, "mnt")
	seed := startDaemon(t, data, mnt)
	mkTopic(t, seed, "t", 1)
	if _, err := testutil.Sh(mnt, "seq 1 3 >> t/0/log", time.Minute); err != nil {
		t.Fatal(err)
	}
	seed.stop()
	cmd := exec.Command(partfsBin, "mount", data, mnt, "--read-only", "--log-level", "info")
	log := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	done := make(chan struct{})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); <-done; detach(t, mnt) }()
	if err := testutil.WaitServing(mnt, log, done); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if out, err := testutil.Sh(mnt, "cat t/0/log", time.Minute); err != nil || out != "1\n2\n3\n" {
		t.Errorf("cat: %v %q", err, out)
	}
	if _, err := testutil.Sh(mnt, "echo 4 >> t/0/log", time.Minute); err == nil || !strings.Contains(err.Error(), "Read-only file system") {
		t.Errorf("append to a mount with --read-only last: %v", err)
	}
	if !strings.Contains(log.String(), "read_only=true") {
		t.Errorf("the daemon did not say read_only=true:\n%s", log)
	}
}

// TestMountOnLiveMountRefused: mounting on a live partfs mount point is refused
// in one line before anything is created, and stacks no second mount.
func TestMountOnLiveMountRefused(t *testing.T) {
	testutil.NeedFUSE(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	startDaemon(t, filepath.Join(dir, "data"), mnt)
	other := filepath.Join(dir, "other")
	stdout, stderr, code := runPartfsSplit("mount", other, mnt)
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "mount point "+mnt+" is already a partfs mount") {
		t.Errorf("second mount: exit %d, %q %q", code, stdout, stderr)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("the refused mount created its data directory")
	}
	if b, _ := os.ReadFile("/proc/self/mountinfo"); bytes.Count(b, []byte(" "+mnt+" ")) != 1 {
		t.Errorf("%d mounts on %s", bytes.Count(b, []byte(" "+mnt+" ")), mnt)
	}
}

// TestMountPointRefusedFirst: a missing mount point or a regular file
// fails with a message saying so, before the data directory is created,
// and leaves no mount behind.
func TestMountPointRefusedFirst(t *testing.T) {
	testutil.NeedFUSE(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for mnt, want := range map[string]string{filepath.Join(dir, "nosuch"): "does not exist", file: "is not a directory"} {
		data := filepath.Join(dir, "data")
		_, stderr, code := runPartfsSplit("mount", data, mnt)
		if code != 1 || !strings.Contains(stderr, "mount point "+mnt+" "+want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("mount on %s: exit %d, %q", mnt, code, stderr)
		}
		if _, err := os.Stat(data); err == nil {
			t.Errorf("mount on %s created the data directory", mnt)
		}
		if b, _ := os.ReadFile("/proc/mounts"); bytes.Contains(b, []byte(mnt)) {
			t.Errorf("mount on %s left an entry in /proc/mounts", mnt)
		}
	}
}

// TestMountScriptRelativePaths: ./mount.sh takes relative paths from the
// caller's directory, says that it creates the data directory and that a
// mount point is not empty, unmounts with -u, and builds a partfs whose
// --version names the commit.
func TestMountScriptRelativePaths(t *testing.T) {
	testutil.NeedFUSE(t)
	script, err := filepath.Abs("../mount.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m", "hidden"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := testutil.Sh(dir, script+" d m 2>&1", 3*time.Minute)
	if err != nil {
		t.Fatalf("mount.sh d m: %v\n%s", err, out)
	}
	defer func() { _, _ = testutil.Sh(dir, script+" -u m", time.Minute); detach(t, filepath.Join(dir, "m")) }()
	for _, want := range []string{"d does not exist; partfs creates a new, empty data directory", "m is not empty"} {
		if !strings.Contains(out, want) {
			t.Errorf("mount.sh said %q, want %q", out, want)
		}
	}
	if !testutil.IsFUSEMount(filepath.Join(dir, "m")) {
		t.Fatalf("%s/m is not mounted", dir)
	}
	if got, err := testutil.Sh(dir, "mkdir m/t && echo x >> m/t/0/log && ls d", 30*time.Second); err != nil || !strings.Contains(got, "t-0") {
		t.Errorf("the data directory is not %s/d: %q %v", dir, got, err)
	}
	if out, err := testutil.Sh(dir, script+" -u m", time.Minute); err != nil || testutil.IsFUSEMount(filepath.Join(dir, "m")) {
		t.Errorf("mount.sh -u m: %v %s", err, out)
	}
	if out, err := exec.Command("../bin/partfs", "--version").Output(); err != nil || builtCommit != "" && !strings.Contains(string(out), " commit "+builtCommit+" ") {
		t.Errorf("mount.sh's build: --version %q (%v), want commit %s", out, err, builtCommit)
	}
}

// runPartfs runs the built binary and returns its output and exit code.
func runPartfsSplit(args ...string) (stdout, stderr string, code int) {
	cmd := exec.Command(partfsBin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && cmd.ProcessState == nil {
		code = -1
	}
	return o.String(), e.String(), code
}

// TestCheckLiveAndAfterSIGKILL: partfs check of a data directory that is
// mounted, and of one left by SIGKILL (active segments with preallocated
// zero index tails, no clean-shutdown marker), reports no damage.
func TestCheckLiveAndAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, filepath.Join(dir, "data"), filepath.Join(dir, "mnt"))
	mkTopic(t, d, "a", 3, "segment.bytes=30000")
	mkTopic(t, d, "b", 1)
	if _, err := testutil.Sh(d.mnt, "seq 1 20000 >> a/0/log && seq 1 10 >> a/1/log && echo x >> b/0/log", time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"mounted", "after SIGKILL"} {
		if when != "mounted" {
			d.kill9()
		}
		if out, code := runPartfs(t, "check", d.data); code != 0 || strings.Contains(out, "DAMAGE") {
			t.Errorf("check %s: exit %d\n%s", when, code, tail(out, 3000))
		}
	}
}

// TestCleanerAndConfigLoggedAtInfo: a mount's log at the default level
// tells of config changes and of each cleaning.
func TestCleanerAndConfigLoggedAtInfo(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, filepath.Join(dir, "data"), filepath.Join(dir, "mnt"), "--config", "log.cleaner.backoff.ms=100")
	mkTopic(t, d, "kv", 1)
	script := "printf 'cleanup.policy=compact\\nsegment.bytes=2000\\n' >> kv/config && for i in $(seq 1 300); do echo \"{\\\"key\\\":\\\"k$((i % 5))\\\",\\\"value\\\":\\\"v$i\\\"}\"; done >> kv/0/log.jsonl"
	if _, err := testutil.Sh(d.mnt, script, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, line := range [][]string{{"level=info", "topic configuration changed", `changes="cleanup.policy=compact"`},
		{"level=info", "log cleaner started"}, {"level=info", "cleaned log", "topic=kv", "removed="}} {
		if !d.waitLog(30*time.Second, line...) {
			t.Errorf("no log line with %q:\n%s", line, tail(d.log.String(), 3000))
		}
	}
}

// TestMountHelper drives scripts/mount.fuse.partfs as mount(8) calls it
// for `mount -t fuse.partfs -o OPTIONS DATADIR MOUNTPOINT`: it returns once
// the mount answers, maps -o options to flags (a dotted KEY=VALUE becomes a
// topic default), and a plain umount stops the daemon cleanly.
func TestMountHelper(t *testing.T) {
	testutil.NeedFUSE(t)
	dir := t.TempDir()
	data, mnt, logf := filepath.Join(dir, "data"), filepath.Join(dir, "mnt"), filepath.Join(dir, "partfs.log")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	helper, err := filepath.Abs("../scripts/mount.fuse.partfs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helper, data, mnt, "-o", "rw,nofail,segment.bytes=1048576,log_level=debug")
	cmd.Env = append(os.Environ(), "PARTFS="+partfsBin, "PARTFS_LOG="+logf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mount helper: %v\n%s", err, out)
	}
	defer detach(t, mnt)
	if !testutil.IsFUSEMount(mnt) {
		t.Fatal("the helper returned before the mount answered")
	}
	out, err := testutil.Sh(mnt, "mkdir t && echo hello >> t/0/log && cat t/0/log && grep '^segment.bytes=' t/config", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out != "hello\nsegment.bytes=1048576\n" {
		t.Fatalf("through the helper's mount: %q", out)
	}
	run(t, "umount", mnt)
	waitFile(t, logf, "clean shutdown")
	if _, err := os.Stat(filepath.Join(data, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("clean shutdown logged but no marker: %v", err)
	}
}

// TestReadOnlyMount: every change on a --read-only mount is EROFS; reads work.
func TestReadOnlyMount(t *testing.T) {
	root := t.TempDir()
	data, mnt := filepath.Join(root, "data"), filepath.Join(root, "mnt")
	d := startDaemon(t, data, mnt)
	mkTopic(t, d, "r", 1)
	appendFile(t, d.path("r", "0", "log"), "a\nb\n")
	d.stop()
	ro := startDaemon(t, data, mnt, "--read-only")
	eROFS := []syscall.Errno{syscall.EROFS}
	for _, op := range []hostileOp{
		{"append log", appendTo(ro.path("r", "0", "log"), []byte("c\n")), eROFS},
		{"append log.jsonl", appendTo(ro.path("r", "0", "log.jsonl"), []byte("{\"value\":\"c\"}\n")), eROFS},
		{"write config", appendTo(ro.path("r", "config"), []byte("retention.ms=1\n")), eROFS},
		{"mkdir topic", func() error { return os.Mkdir(ro.path("new"), 0o755) }, eROFS},
		{"mkdir partition", func() error { return os.Mkdir(ro.path("r", "1"), 0o755) }, eROFS},
		{"write @key", writeTo(ro.path("r", "0", "@key/k"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, []byte("v")), eROFS},
		{"rm @key", func() error { return os.Remove(ro.path("r", "0", "@key/k")) }, []syscall.Errno{syscall.EROFS, syscall.ENOENT}},
		{"truncate log", func() error { return os.Truncate(ro.path("r", "0", "log"), 0) }, eROFS},
	} {
		op.run(t)
	}
	checkServedLines(t, ro.path("r", "0", "log"), []string{"a", "b"})
	ro.stop()
}

// TestSecondMountRefused: a second mount of a mounted data directory fails
// with a clear message (Kafka's .lock), and the first keeps working.
func TestSecondMountRefused(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	d := startDaemon(t, data, filepath.Join(root, "mnt"))
	mnt2 := filepath.Join(root, "mnt2")
	os.MkdirAll(mnt2, 0o755)
	cmd := exec.Command(partfsBin, "mount", data, mnt2)
	done := make(chan error, 1)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("second mount exited 0")
		}
		if !strings.Contains(out.String(), ".lock") {
			t.Errorf("second mount's message does not name .lock:\n%s", out.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		detach(t, mnt2)
		t.Fatalf("second mount of a mounted data directory kept running:\n%s", out.String())
	}
	if testutil.IsFUSEMount(mnt2) {
		detach(t, mnt2)
		t.Errorf("second mount left a mount behind")
	}
	mkTopic(t, d, "still", 1)
	d.stop()
}
