package systest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
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
