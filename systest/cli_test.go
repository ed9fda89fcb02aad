package systest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// TestHelpOnStdout: --help of partfs and of every command goes to stdout
// with exit 0 (`partfs mount --help | less` shows it); --version prints
// one line; a bad flag gets the usage on stderr and exit 2.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"mount", "--help"}, {"dump", "--help"},
		{"check", "--help"}, {"compact", "--help"}, {"dev-cluster", "--help"}, {"mount", "-h"}} {
		stdout, stderr, code := runPartfsSplit(args...)
		if code != 0 || !strings.Contains(stdout, "usage: partfs") || stderr != "" {
			t.Errorf("partfs %v: exit %d, %d bytes on stdout, stderr %q", args, code, len(stdout), stderr)
		}
	}
	if stdout, stderr, code := runPartfsSplit("--version"); code != 0 || !strings.HasPrefix(stdout, "partfs ") || strings.Count(stdout, "\n") != 1 || stderr != "" {
		t.Errorf("partfs --version: exit %d, %q %q", code, stdout, stderr)
	}
	if stdout, stderr, code := runPartfsSplit("check", "--nosuch"); code != 2 || stdout != "" || !strings.Contains(stderr, "usage: partfs check") {
		t.Errorf("partfs check --nosuch: exit %d, %q %q", code, stdout, stderr)
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
		if code != 1 || !strings.Contains(stderr, "mount point "+mnt+" "+want) {
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
// mount point is not empty, and unmounts with -u.
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
	if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(logf); strings.Contains(string(b), "clean shutdown") {
			if _, err := os.Stat(filepath.Join(data, ".kafka_cleanshutdown")); err != nil {
				t.Fatalf("clean shutdown logged but no marker: %v", err)
			}
			return
		}
	}
	b, _ := os.ReadFile(logf)
	t.Fatalf("daemon did not shut down cleanly after umount; log:\n%s", b)
}
