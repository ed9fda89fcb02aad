package systest

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

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

// TestKafkaRequestDeadline: a FUSE request waits on the cluster no longer
// than --kafka-timeout in total, however many calls it makes. The cluster
// answers each ListOffsets after 0.8 s (a request's two together 1.6 s,
// within the 2 s timeout) and then stops answering fetches: a `cat` of a
// partition the mount had read (open: 1.6 s of ListOffsets; read: 1.6 s
// of ListOffsets and the fetch) and then a `stat` of a partition the mount never looked at
// (its offsets, 1.6 s, then a fetch of its last tile) fail with
// ETIMEDOUT, each request within the timeout: open and read each in less
// than 2.5 s, stat of log and of @offset/1 too, cat (lookup, open, read)
// in less than 6.5 s; and a write whose configs are answered after 1.6 s
// and whose produce never is, in less than 2.5 s.
func TestKafkaRequestDeadline(t *testing.T) {
	testutil.Kcat(t)
	c, addr := kafkaCluster(t, kfake.SeedTopics(1, "t", "u"))
	for _, topic := range []string{"t", "u"} {
		kcat(t, addr, "a\nb\nc\n", "-P", "-t", topic, "-p", "0")
	}
	const timeout = 2 * time.Second
	d := kafkaMount(t, addr, "", "--kafka-timeout", timeout.String())
	if got := d.sh("cat t/0/log"); got != "a\nb\nc\n" {
		t.Fatalf("cat t/0/log: %q", got)
	}
	w, err := os.OpenFile(d.path("t", "0", "log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		time.Sleep(800 * time.Millisecond)
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true // never answered
	})
	timed := func(script string, limit time.Duration) {
		t.Helper()
		start := time.Now()
		out, err := testutil.Sh(d.mnt, script, time.Minute)
		took := time.Since(start)
		t.Logf("%s: %v (%v)", script, took.Round(10*time.Millisecond), err)
		if err == nil || !strings.Contains(err.Error(), "Connection timed out") {
			t.Fatalf("%s: %q, %v; want ETIMEDOUT", script, out, err)
		}
		if took > limit {
			t.Fatalf("%s took %v with --kafka-timeout %v (limit %v)\n%s", script, took, timeout, limit, tail(d.log.String(), 3000))
		}
	}
	// open and read, each one FUSE request, timed one by one
	start := time.Now()
	f, err := os.Open(d.path("t", "0", "log"))
	opened := time.Since(start)
	if err == nil {
		time.Sleep(100 * time.Millisecond) // the offsets the open asked for grow old: the read asks again
		start = time.Now()
		_, err = f.Read(make([]byte, 100))
		f.Close()
	}
	read := time.Since(start)
	t.Logf("open %v, read %v: %v", opened.Round(10*time.Millisecond), read.Round(10*time.Millisecond), err)
	if !errors.Is(err, syscall.ETIMEDOUT) || opened > timeout+500*time.Millisecond || read > timeout+500*time.Millisecond {
		t.Fatalf("open %v, read %v (%v) with --kafka-timeout %v\n%s", opened, read, err, timeout, tail(d.log.String(), 3000))
	}
	time.Sleep(1100 * time.Millisecond) // the quarantine after the failure ends
	// cat: its lookup's getattr, open and read, three requests
	timed("cat t/0/log", 3*timeout+500*time.Millisecond)
	time.Sleep(1100 * time.Millisecond)
	// stat of a partition never looked at: its offsets, then its last tile
	timed("stat u/0/log", timeout+500*time.Millisecond)
	time.Sleep(1100 * time.Millisecond)
	// a window's lookup: its offsets, then the records at its start
	timed("stat t/0/@offset/1", timeout+500*time.Millisecond)
	// a write: the topic's configs (answered after 1.6 s), then a
	// produce (never answered)
	c.ControlKey(int16(kmsg.DescribeConfigs), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		time.Sleep(1600 * time.Millisecond)
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true
	})
	time.Sleep(1100 * time.Millisecond)
	start = time.Now()
	_, err = w.Write([]byte("d\n"))
	wrote := time.Since(start)
	t.Logf("write %v: %v", wrote.Round(10*time.Millisecond), err)
	if !errors.Is(err, syscall.ETIMEDOUT) || wrote > timeout+500*time.Millisecond {
		t.Fatalf("write %v (%v) with --kafka-timeout %v\n%s", wrote, err, timeout, tail(d.log.String(), 3000))
	}
	if !strings.Contains(d.log.String(), "request's") {
		t.Errorf("no log line names the request's deadline:\n%s", tail(d.log.String(), 3000))
	}
}
