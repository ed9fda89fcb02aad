package systest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// TestLoad: 4 writers and 4 `tail -f` readers on the same two partitions
// for PARTFS_LOAD_SECONDS (60; 300 with PARTFS_SYSTEST_LONG): every reader
// sees every line once, in order (its output equals the file at the end),
// each writer's acknowledged lines are there in its order, and the
// daemon's RSS stays bounded. Reports lines/s.
func TestLoad(t *testing.T) {
	secs := testSize(t, "PARTFS_LOAD_SECONDS", 60, 300)
	d := startFresh(t)
	mkTopic(t, d, "load", 2, "segment.bytes=8388608", "compression.type=lz4")
	files := []string{"load/0/log", "load/0/log.jsonl", "load/1/log", "load/1/log.jsonl"}
	readers := make([]*tailReader, len(files))
	for i, f := range files {
		readers[i] = startTail(t, d.path(f), filepath.Join(t.TempDir(), "tail"))
	}
	var rssMax int64
	stopRSS := make(chan struct{})
	var rssWG sync.WaitGroup
	testutil.Every(&rssWG, stopRSS, func() <-chan time.Time { return time.After(time.Second) }, func() bool {
		if s := d.stats(); s.rssKB > rssMax {
			rssMax = s.rssKB
		}
		return true
	})
	writers := make([]*loadWriter, 4)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range writers {
		writers[i] = &loadWriter{id: i, path: d.path(fmt.Sprintf("load/%d/log", i%2))}
		wg.Add(1)
		go func() { defer wg.Done(); writers[i].run(ctx) }()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopRSS)
	rssWG.Wait()
	total := 0
	for _, w := range writers {
		if w.err != nil {
			t.Errorf("writer %d: %v", w.id, w.err)
		}
		total += len(w.acked)
	}
	t.Logf("%d lines in %v by 4 writers: %.0f lines/s; daemon RSS max %d MiB", total, elapsed.Round(time.Millisecond),
		float64(total)/elapsed.Seconds(), rssMax>>10)
	for p := 0; p < 2; p++ {
		content := testutil.ReadFile(t, d.path(fmt.Sprintf("load/%d/log", p)))
		checkWriters(t, content, writers[p], writers[p+2])
		for i, f := range files {
			if strings.HasPrefix(f, fmt.Sprintf("load/%d/", p)) {
				want := content
				if strings.HasSuffix(f, ".jsonl") {
					want = testutil.ReadFile(t, d.path(f))
				}
				readers[i].finish(t, want)
			}
		}
	}
	if rssMax > 512<<10 {
		t.Errorf("daemon RSS reached %d MiB", rssMax>>10)
	}
	d.stop()
}

// loadWriter appends numbered lines, 1-10 per write, as fast as it can.
type loadWriter struct {
	id    int
	path  string
	acked []string
	err   error
}

func (w *loadWriter) run(ctx context.Context) {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		w.err = err
		return
	}
	defer f.Close()
	var buf bytes.Buffer
	for seq := 0; ctx.Err() == nil; {
		buf.Reset()
		n := 1 + seq%10
		lines := make([]string, 0, n)
		for i := 0; i < n; i++ {
			l := fmt.Sprintf("w%d-%09d-%s", w.id, seq, strings.Repeat("p", 40+seq%50))
			lines = append(lines, l)
			buf.WriteString(l + "\n")
			seq++
		}
		if _, err := f.Write(buf.Bytes()); err != nil {
			w.err = err
			return
		}
		w.acked = append(w.acked, lines...)
	}
}

// checkWriters: the file holds exactly the writers' lines, each writer's in
// its order.
func checkWriters(t *testing.T, content []byte, ws ...*loadWriter) {
	t.Helper()
	next := map[string]int{}
	byID := map[string]*loadWriter{}
	total := 0
	for _, w := range ws {
		byID[fmt.Sprintf("w%d", w.id)] = w
		total += len(w.acked)
	}
	lines := strings.Split(strings.TrimSuffix(string(content), "\n"), "\n")
	if len(lines) != total {
		t.Errorf("file has %d lines, writers acknowledged %d", len(lines), total)
	}
	for n, l := range lines {
		id, _, _ := strings.Cut(l, "-")
		w := byID[id]
		if w == nil || next[id] >= len(w.acked) || w.acked[next[id]] != l {
			t.Fatalf("line %d %.40q: not the next line of its writer", n, l)
		}
		next[id]++
	}
}

// tailReader is a `tail -n +1 -f` process writing to a file.
type tailReader struct {
	cmd  *exec.Cmd
	out  string
	done chan error
}

func startTail(t *testing.T, path, out string) *tailReader {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	// polling every 0.2 s; inotify does not see FUSE appends
	cmd := exec.Command("tail", "---disable-inotify", "-s", "0.2", "-n", "+1", "-f", path)
	cmd.Stdout = f
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := &tailReader{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return r
}

// finish waits until the reader has caught up with want (at most 30 s),
// stops it, and requires its output to equal want.
func (r *tailReader) finish(t *testing.T, want []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		fi, err := os.Stat(r.out)
		if err == nil && fi.Size() >= int64(len(want)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.cmd.Process.Kill()
	<-r.done
	got := testutil.ReadFile(t, r.out)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("tail -f of %s: %d bytes, file has %d; first difference at byte %d: got %.60q want %.60q",
			r.cmd.Args[len(r.cmd.Args)-1], len(got), len(want), i, got[min(i, len(got)):], want[min(i, len(want)):])
	}
}
