package systest

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// timedOps are system calls on a cluster mount, each of which asks the
// cluster something; run against an unreachable cluster, each must end
// within --kafka-timeout plus one second.
var timedOps = []struct{ name, script string }{
	{"write", "echo during >> t/0/log"},
	{"open", "exec 3< t/0/log"},
	{"open+read", "cat t/0/log >/dev/null"},
	{"read past the cache", "tail -c 10 t/0/log.jsonl >/dev/null"},
	{"readdir root", "ls >/dev/null"},
	{"readdir topic", "ls t >/dev/null"},
	{"stat file", "stat t/0/log >/dev/null"},
	{"cat stat", "cat t/0/stat >/dev/null"},
	{"lookup @offset", "stat t/0/@offset/1 >/dev/null"},
	{"read @offset", "head -c 10 t/0/@offset/2 >/dev/null"},
	{"lookup @time", "stat t/0/@time/1 >/dev/null"},
	{"read @time", "head -c 10 t/0/@time/1000 >/dev/null"},
	{"config write", "echo retention.ms=1000000 > t/config"},
	{"mkdir", "mkdir u"},
}

// runTimedOps runs every op and fails those slower than limit. Each op
// starts either just after the store's quarantine of an unreachable
// cluster ended (a fresh attempt) or just before it ends (its first
// requests fail at once, a later one tries the cluster again): the two
// cases whose sum the limit bounds.
func runTimedOps(t *testing.T, d *daemon, state string, limit time.Duration, w, r *os.File) {
	t.Helper()
	timed := func(i int, name string, fn func() (string, error)) {
		time.Sleep([]time.Duration{1100 * time.Millisecond, 900 * time.Millisecond}[i%2])
		start := time.Now()
		out, err := fn()
		took := time.Since(start)
		t.Logf("%s, %-22s %6.2f s  err=%v %s", state, name, took.Seconds(), err, strings.TrimSpace(out))
		if took > limit {
			t.Errorf("%s: %s took %v, limit %v", state, name, took, limit)
		}
	}
	timed(0, "write on an open file", func() (string, error) { _, err := w.Write([]byte("during\n")); return "", err })
	timed(2, "read of an open file", func() (string, error) {
		st, err := r.Stat()
		if err != nil {
			return "", err
		}
		_, err = r.ReadAt(make([]byte, 4096), st.Size()-4096)
		return "", err
	})
	for i, op := range timedOps {
		timed(i, op.name, func() (string, error) { return testutil.Sh(d.mnt, "("+op.script+") 2>&1", 60*time.Second) })
	}
}

// openFiles opens t/0/log for appending and for reading (after writing
// lines it has not read yet, so reading its end fetches from the cluster).
func openFiles(t *testing.T, d *daemon) (w, r *os.File) {
	t.Helper()
	d.sh("seq 1 20000 >> t/0/log")
	w, err := os.OpenFile(d.path("t", "0", "log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	r, err = os.Open(d.path("t", "0", "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return w, r
}

// TestKafkaDeadlines: with --kafka-timeout 1s, every system call of
// timedOps ends within 2 s while the cluster process is stopped (SIGSTOP)
// and after it is killed; when the stopped cluster continues, the same
// mount works again.
func TestKafkaDeadlines(t *testing.T) {
	testutil.NeedFUSE(t)
	cluster, addr, exited := devClusterProc(t, os.Stderr, "--log-level", "warn")
	d := kafkaMount(t, addr, "", "--kafka-timeout", "1s")
	d.sh("mkdir t && seq 1 100 >> t/0/log && cat t/0/log >/dev/null")
	limit := 2 * time.Second
	w, r := openFiles(t, d)
	if err := cluster.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	runTimedOps(t, d, "stopped", limit, w, r)
	if err := cluster.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	out, err := d.shOnceUp("echo after >> t/0/log && tail -n 1 t/0/log")
	if err != nil || out != "after\n" {
		t.Fatalf("after the cluster continues: %v %q\n%s", err, out, tail(d.log.String(), 2000))
	}
	w, r = openFiles(t, d)
	_ = cluster.Process.Kill()
	<-exited
	runTimedOps(t, d, "killed", limit, w, r)
	w.Close()
	r.Close()
	d.stop()
}
