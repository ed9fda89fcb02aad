package systest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// otherUser is a second local account, created for the test.
type otherUser struct{ uid, gid uint32 }

func newOtherUser(t *testing.T) otherUser {
	t.Helper()
	name := fmt.Sprintf("partfs%d", os.Getpid()%100000)
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/bin/sh", name).CombinedOutput(); err != nil &&
		!strings.Contains(string(out), "already exists") {
		t.Fatalf("useradd %s: %v %s", name, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	id := func(flag string) uint32 {
		out, err := exec.Command("id", flag, name).Output()
		if err != nil {
			t.Fatalf("id %s %s: %v", flag, name, err)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(n)
	}
	return otherUser{uid: id("-u"), gid: id("-g")}
}

// run runs a shell command as the user and returns its output and whether
// it succeeded.
func (u otherUser) run(script string) (string, bool) {
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid}}
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// openPath makes dir and its parents up to the test's temp root
// traversable by other users.
func openPath(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// refused checks that the user's command fails with EACCES.
func (u otherUser) refused(t *testing.T, what, script string) {
	t.Helper()
	out, ok := u.run(script)
	if ok || !strings.Contains(out, "Permission denied") {
		t.Errorf("another user: %s: ok=%v %q, want Permission denied", what, ok, out)
	}
}

func permissionFaults() []faultCase {
	return []faultCase{
		{name: "another user, --allow-other: reads what the modes allow, changes nothing", run: func(t *testing.T, dir string) {
			buildDataDir(t, dir)
			u := newOtherUser(t)
			openPath(t, dir)
			d := startDaemon(t, dir, dir+".mnt", "--allow-other")
			if err := os.WriteFile(d.path("t", "0", "@key", "k"), []byte("v1"), 0o644); err != nil {
				t.Fatal(err)
			}
			for path, want := range map[string]os.FileMode{
				"t/0/log": 0o644, "t/0/log.jsonl": 0o644, "t/config": 0o644, "t/0/@key/k": 0o644,
				"t/0/stat": 0o444, "t/0/@offset": os.ModeDir | 0o555, "t/0/segments": os.ModeDir | 0o555,
				"t/0": os.ModeDir | 0o555, "t": os.ModeDir | 0o755, "t/0/@key": os.ModeDir | 0o755, ".": os.ModeDir | 0o755,
			} {
				fi, err := os.Stat(d.path(path))
				if err != nil {
					t.Fatal(err)
				}
				st := fi.Sys().(*syscall.Stat_t)
				if fi.Mode() != want || st.Uid != uint32(os.Getuid()) || st.Gid != uint32(os.Getgid()) {
					t.Errorf("%s: mode %v uid %d gid %d, want %v owned by the mounting user %d:%d",
						path, fi.Mode(), st.Uid, st.Gid, want, os.Getuid(), os.Getgid())
				}
			}
			mnt := d.path()
			if out, ok := u.run("wc -l < " + mnt + "/t/0/log.jsonl"); !ok || strings.TrimSpace(out) != "41" {
				t.Errorf("another user reading t/0/log.jsonl: ok=%v %q, want 41 lines", ok, out)
			}
			u.refused(t, "append to log", "printf 'x\\n' >> "+mnt+"/t/0/log")
			u.refused(t, "append to log.jsonl", "printf '{\"value\":\"x\"}\\n' >> "+mnt+"/t/0/log.jsonl")
			u.refused(t, "create a topic", "mkdir "+mnt+"/u")
			u.refused(t, "add a partition", "mkdir "+mnt+"/t/1")
			u.refused(t, "set retention.ms=1", "printf 'retention.ms=1\\n' > "+mnt+"/t/config")
			u.refused(t, "rm @key/k", "rm -f "+mnt+"/t/0/@key/k")
			u.refused(t, "write @key/k2", "printf v > "+mnt+"/t/0/@key/k2")
			if offs, err := jsonlOffsets(d, "t", "0"); err != nil || len(offs) != tEnd+1 {
				t.Errorf("t/0 after the other user: %d records, %v; want %d", len(offs), err, tEnd+1)
			}
			if b, err := os.ReadFile(d.path("t", "0", "@key", "k")); err != nil || string(b) != "v1\n" {
				t.Errorf("@key/k after the other user: %q %v", b, err)
			}
			if cfg := configMap(t, d.path("t", "config")); cfg["retention.ms"] == "1" {
				t.Errorf("the other user changed retention.ms")
			}
			if _, err := os.Stat(d.path("u")); err == nil {
				t.Errorf("the other user created a topic")
			}
			if _, err := os.Stat(d.path("t", "1")); err == nil {
				t.Errorf("the other user added a partition")
			}
			d.stop()
		}},
		{name: "another user, no --allow-other: sees nothing", run: func(t *testing.T, dir string) {
			buildDataDir(t, dir)
			u := newOtherUser(t)
			openPath(t, dir)
			d := startDaemon(t, dir, dir+".mnt")
			mnt := d.path()
			u.refused(t, "list the mount", "ls "+mnt)
			u.refused(t, "read t/0/log.jsonl", "cat "+mnt+"/t/0/log.jsonl")
			u.refused(t, "append to log", "printf 'x\\n' >> "+mnt+"/t/0/log")
			u.refused(t, "create a topic", "mkdir "+mnt+"/u")
			if offs, err := jsonlOffsets(d, "t", "0"); err != nil || len(offs) != tEnd {
				t.Errorf("t/0 after the other user: %d records, %v; want %d", len(offs), err, tEnd)
			}
			d.stop()
		}},
	}
}
