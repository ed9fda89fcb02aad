package systest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHugeLine: a 100 MB line (default max.message.bytes) fails with EFBIG,
// appends nothing, and the daemon stays up with bounded memory.
func TestHugeLine(t *testing.T) {
	d := startFresh(t)
	mkTopic(t, d, "big", 1)
	appendFile(t, d.path("big", "0", "log"), "before\n")
	line := bytes.Repeat([]byte("z"), 100<<20)
	for _, op := range []hostileOp{
		{"100 MB line with newline", appendTo(d.path("big", "0", "log"), append(line, '\n')), eFBIG},
		{"100 MB partial line, then close", appendTo(d.path("big", "0", "log"), line), eFBIG},
		{"100 MB jsonl value", appendTo(d.path("big", "0", "log.jsonl"), []byte("{\"value\":\""+string(line)+"\"}\n")), eFBIG},
	} {
		before := d.stats()
		start := time.Now()
		op.run(t)
		after := d.stats()
		t.Logf("%s: refused in %v; daemon RSS %d -> %d KiB", op.name, time.Since(start).Round(time.Millisecond), before.rssKB, after.rssKB)
		// the line is refused past max.message.bytes (1 MiB): the daemon
		// need not hold the whole 100 MB
		if grew := after.rssKB - before.rssKB; grew > 64<<10 {
			t.Errorf("BUG: %s: daemon RSS grew by %d MiB: it buffers the whole line instead of refusing it past max.message.bytes", op.name, grew>>10)
		}
	}
	appendFile(t, d.path("big", "0", "log"), "after\n")
	checkServedLines(t, d.path("big", "0", "log"), []string{"before", "after"})
	if end := statField(t, d, "big/0", "log_end_offset"); end != 2 {
		t.Errorf("log end offset %d after refused huge lines, want 2", end)
	}
	if !d.running() || d.panicked() {
		t.Fatalf("daemon died:\n%s", tail(d.log.String(), 3000))
	}
	d.stop()
}

// TestManyTopics: mkdir of many topics (PARTFS_TOPICS; 10,000 with
// PARTFS_SYSTEST_LONG), all listed, all back after a remount; fds per topic.
func TestManyTopics(t *testing.T) {
	n := testSize(t, "PARTFS_TOPICS", 2000, 10000)
	d := startFresh(t)
	before := d.stats()
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := os.Mkdir(d.path(fmt.Sprintf("topic-%05d", i)), 0o755); err != nil {
			s := d.stats()
			alive := d.running() && !d.panicked()
			_, rerr := os.ReadDir(d.mnt)
			t.Fatalf("mkdir topic %d: %v (daemon fds %d; daemon alive %v, ls of the mount: %v)", i, err, s.fds, alive, rerr)
		}
	}
	took := time.Since(start)
	after := d.stats()
	t.Logf("%d topics in %v (%.0f mkdir/s); daemon fds %d -> %d (%.2f per topic), RSS %d -> %d KiB, threads %d -> %d",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), before.fds, after.fds,
		float64(after.fds-before.fds)/float64(n), before.rssKB, after.rssKB, before.threads, after.threads)
	appendFile(t, d.path("topic-00007", "0", "log"), "x\n")
	countTopics(t, d, n)
	d.stop()
	start = time.Now()
	d.restart()
	t.Logf("remount with %d topics answered in %v", n, time.Since(start).Round(time.Millisecond))
	countTopics(t, d, n)
	checkServedLines(t, d.path("topic-00007", "0", "log"), []string{"x"})
	d.stop()
}

func countTopics(t *testing.T, d *daemon, n int) {
	t.Helper()
	ents, err := os.ReadDir(d.mnt)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "topic-") {
			got++
		}
	}
	if got != n {
		t.Errorf("ls shows %d topics, want %d", got, n)
	}
}
