package systest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/kafkalog"
)

// denseStarts is where a mount that finds the tiles of texts unread
// places them: each right after the one before (it reads up to 16
// tiles to place the next ones).
func denseStarts(texts map[int]string) []int64 {
	starts := make([]int64, len(texts))
	for w := 1; w < len(texts); w++ {
		starts[w] = starts[w-1] + int64(len(texts[w-1]))
	}
	return starts
}

// tileTexts renders what kcat reads of partition 0 of topic as `log`
// renders it, tile by tile, and the set of values.
func tileTexts(t *testing.T, addr, topic string) (map[int]string, map[string]bool) {
	t.Helper()
	out := kcat(t, addr, "", "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o %s\n")
	texts, values := map[int]*strings.Builder{}, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		o, v, _ := strings.Cut(line, " ")
		off, err := strconv.ParseInt(o, 10, 64)
		if err != nil {
			t.Fatalf("kcat line %q", line)
		}
		w := int(off / kafkalog.TileOffsets)
		if texts[w] == nil {
			texts[w] = &strings.Builder{}
		}
		texts[w].WriteString(v + "\n")
		values[v] = true
	}
	m := map[int]string{}
	for w, b := range texts {
		m[w] = b.String()
	}
	return m, values
}

// readAt reads n bytes at position pos of file (pread, as dd skip= does).
func readAt(t *testing.T, file string, pos int64, n int) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	got, err := f.ReadAt(b, pos)
	if got != n {
		t.Fatalf("pread %d bytes at %d of %s: %d, %v", n, pos, file, got, err)
	}
	return string(b)
}

// checkTiles asserts that each tile's range starts with its records
// as the cluster has them now, at its start and at positions inside it,
// that st_size ends the last tile's rendering, and that cat reads
// exactly the cluster's records.
func checkTiles(t *testing.T, d *daemon, addr string, when string, starts []int64) map[int]string {
	t.Helper()
	texts, _ := tileTexts(t, addr, "c")
	file := d.path("c", "0", "log")
	last, all := 0, ""
	for w := 0; w < len(texts); w++ {
		text := texts[w]
		last, all = w, all+text
		for _, x := range []int{0, len(text) / 3, len(text) / 2, len(text) - 200} {
			if got := readAt(t, file, starts[w]+int64(x), 200); got != text[x:x+200] {
				t.Fatalf("%s: tile %d, %d bytes into its range: %.40q, want %.40q", when, w, x, got, text[x:x+200])
			}
		}
	}
	st, err := os.Stat(file)
	if want := starts[last] + int64(len(texts[last])); err != nil || st.Size() != want {
		t.Fatalf("%s: st_size %d, want %d (the last tile's start plus its rendering) %v", when, st.Size(), want, err)
	}
	if got := d.sh("cat c/0/log"); got != all {
		t.Fatalf("%s: cat log reads %d bytes, the cluster's records render to %d", when, len(got), len(all))
	}
	return texts
}

// compactedTopic starts a cluster with the compacted topic c, created
// through a mount, and n records of keys keyOf(i) produced to it by kcat
// while nothing is mounted. Records of 197 bytes put a position
// checkpoint every 64 KiB of a tile's rendering.
func compactedTopic(t *testing.T, n int, keyOf func(i int) string) (*kfake.Cluster, string) {
	c, addr, d := kcatMount(t)
	d.sh("mkdir c && echo cleanup.policy=compact >> c/config")
	d.stop()
	var in strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, "%s:%05d %s\n", keyOf(i), i, strings.Repeat(string(rune('a'+i%26)), 190))
	}
	kcat(t, addr, in.String(), "-P", "-t", "c", "-p", "0", "-K", ":")
	return c, addr
}

// TestKafkaRewriteReRendersTile: tiles the cluster rewrote are
// rendered again inside their own byte ranges, and no other tile
// moves. Across a remount with the same cache directory: compaction and
// DeleteRecords while nothing was mounted (the tiles' offsets do not
// show it). Within a mount: compaction seen by a read from a tile's
// first offset. Every position read is checked against kcat's records.
func TestKafkaRewriteReRendersTile(t *testing.T) {
	// tile 0: unique keys; 1: 50 keys over and over; 2: unique; 3 (the
	// last, partial): 50 keys again.
	c, addr := compactedTopic(t, 14000, func(i int) string {
		if w := i / kafkalog.TileOffsets; w == 1 || w == 3 {
			return fmt.Sprint("k", w, "-", i%50)
		}
		return fmt.Sprint("u", i)
	})
	var in strings.Builder
	cache := t.TempDir()
	d := kafkaMount(t, addr, cache)
	first, _ := tileTexts(t, addr, "c")
	starts := denseStarts(first)
	before := checkTiles(t, d, addr, "first mount", starts)
	if len(before) != 4 {
		t.Fatalf("%d tiles, want 4", len(before))
	}
	d.stop()

	c.Compact()
	deleteRecords(t, addr, "c", 1000)
	d = kafkaMount(t, addr, cache)
	after := checkTiles(t, d, addr, "after compaction and DeleteRecords while unmounted", starts)
	if after[2] != before[2] || len(after[1]) >= len(before[1]) || len(after[0]) >= len(before[0]) {
		t.Fatalf("tiles rendered %d %d %d bytes, before %d %d %d: the cluster did not rewrite tiles 0 and 1 only",
			len(after[0]), len(after[1]), len(after[2]), len(before[0]), len(before[1]), len(before[2]))
	}

	// Within the mount: records superseding the first 300 of tile 2
	// (they land in tile 3, and a batch after them), compaction, then a read of every tile
	// from its first offset (cat) sees tile 2 rewritten.
	in.Reset()
	for i := 8192; i < 8492; i++ {
		fmt.Fprintf(&in, "u%d:%05d again\n", i, i)
	}
	kcat(t, addr, in.String(), "-P", "-t", "c", "-p", "0", "-K", ":")
	kcat(t, addr, "end:the last batch, which kfake never compacts\n", "-P", "-t", "c", "-p", "0", "-K", ":")
	c.Compact()
	// kfake's compaction brings back what DeleteRecords removed (Kafka's
	// does not): remove it again.
	deleteRecords(t, addr, "c", 1000)
	// A read may start with the unread rest of a fetch answer up to 1 s
	// old (kafkalog's restCache): a compaction is seen by the first read
	// of a tile that comes after that.
	time.Sleep(1100 * time.Millisecond)
	d.sh("cat c/0/log > /dev/null")
	now := checkTiles(t, d, addr, "after compaction while mounted", starts)
	if len(now[2]) >= len(after[2]) || now[0] != after[0] {
		t.Fatalf("tile 2 renders %d bytes, %d before compaction; tile 0 changed: %v", len(now[2]), len(after[2]), now[0] != after[0])
	}
	d.stop()
}

// TestKafkaStopDuringWrites: SIGTERM while a writer appends 100 lines
// per write() and keeps the file open: the daemon detaches, serves the
// open file a few seconds more, then aborts the connection (the writer
// gets an error), finishes the write in flight and exits 0; the cluster
// holds every acknowledged write, whole, and at most the one whose answer
// the abort cut off.
func TestKafkaStopDuringWrites(t *testing.T) {
	testutil.Kcat(t)
	_, addr := kafkaCluster(t)
	d := kafkaMount(t, addr, "")
	d.sh("mkdir t")
	f, err := os.OpenFile(d.path("t", "0", "log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const perWrite = 100
	chunk := []byte(strings.Repeat(strings.Repeat("w", 99)+"\n", perWrite))
	acked := 0
	for ; acked < 20; acked++ {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan int)
	go func() {
		n := 0
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); n++ {
			if _, err := f.Write(chunk); err != nil {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		done <- n
	}()
	start := time.Now()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	acked += <-done
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("writes went on %v after SIGTERM", took)
	}
	<-d.done
	if d.exitErr != nil {
		t.Fatalf("exit after SIGTERM during writes: %v\n%s", d.exitErr, tail(d.log.String(), 2000))
	}
	detach(t, d.mnt)
	lines := strings.Count(kcat(t, addr, "", "-C", "-t", "t", "-p", "0", "-e", "-q"), "\n")
	if lines%perWrite != 0 || lines < acked*perWrite || lines > (acked+1)*perWrite {
		t.Fatalf("the cluster holds %d lines after %d acknowledged writes of %d", lines, acked, perWrite)
	}
	t.Logf("%d writes acknowledged, %d lines in the cluster", acked, lines)
}

// TestKafkaReadCommitted: through the mount a partition with an aborted
// and a committed transaction reads as a read_committed consumer (kcat
// with isolation.level=read_committed) sees it: no markers, no aborted
// records, offsets with their gaps, in log, log.jsonl, @offset/N and stat.
// The topic is created by another client after the mount listed the
// topics: a lookup that misses asks the cluster.
func TestKafkaReadCommitted(t *testing.T) {
	c, addr, d := kcatMount(t)
	testutil.KafkaTxnLayout(t, c)
	want := kcat(t, addr, "", "-X", "isolation.level=read_committed", "-C", "-t", "txn", "-p", "0", "-e", "-q", "-f", "%o %s\n")
	if want != "0 v0\n1 v1\n5 v5\n6 v6\n8 v8\n" {
		t.Fatalf("kcat read_committed reads %q", want)
	}
	var got strings.Builder
	for _, r := range jsonlRecs(t, d.sh("cat txn/0/log.jsonl")) {
		fmt.Fprintf(&got, "%d %s\n", r.Offset, *r.Value)
	}
	if got.String() != want {
		t.Errorf("log.jsonl reads %q, kcat %q", got.String(), want)
	}
	if out := d.sh("cat txn/0/log; head -1 txn/0/@offset/2; grep '^records:' txn/0/stat"); out != "v0\nv1\nv5\nv6\nv8\nv5\nrecords: 5\n" {
		t.Errorf("log, @offset/2 and stat read %q", out)
	}
	d.stop()
}

// atStarts is what a read of n bytes at position pos of `log` returns when
// each tile w's rendering texts[w] lies at starts[w]: the rest of the
// tile's rendering from pos (from the next tile's start in a gap),
// then the tiles after it.
func atStarts(texts map[int]string, starts []int64, pos int64, n int) string {
	out := ""
	for w := 0; w < len(texts) && len(out) < n; w++ {
		if end := starts[w] + int64(len(texts[w])); end > pos {
			out += texts[w][max(pos-starts[w], 0):]
		}
	}
	return out[:min(n, len(out))]
}

// TestKafkaRewriteSeenBySeekingRead: a tile the cluster compacts while
// mounted, read next at a position deep inside it (pread, as dd skip=
// does) rather than from its first offset, reads as the cluster has it
// now: the read notices the batches it fetches are not the ones a read
// of the whole tile met, and the tile is rendered again in place.
func TestKafkaRewriteSeenBySeekingRead(t *testing.T) {
	// tile 0: 50 keys over and over (compaction keeps its last 50
	// records); tile 1: unique keys.
	c, addr := compactedTopic(t, 6000, func(i int) string {
		if i < kafkalog.TileOffsets {
			return fmt.Sprint("k-", i%50)
		}
		return fmt.Sprint("u", i)
	})
	// kfake keeps a partition's last batch as it is, and how kcat batches
	// 6,000 records depends on the machine's load (a batch of the last
	// 2,000 would start inside tile 0): one more record, produced on its
	// own, is that last batch, in tile 1.
	kcat(t, addr, "u6000:06000 last\n", "-P", "-t", "c", "-p", "0", "-K", ":")
	d := kafkaMount(t, addr, "")
	first, _ := tileTexts(t, addr, "c")
	starts := denseStarts(first)
	before := checkTiles(t, d, addr, "before compaction", starts)
	c.Compact()
	time.Sleep(1100 * time.Millisecond) // past kafkalog's restCache
	texts, _ := tileTexts(t, addr, "c")
	if len(texts[0]) >= len(before[0])/10 {
		t.Fatalf("tile 0 renders %d bytes after compaction, %d before", len(texts[0]), len(before[0]))
	}
	file := d.path("c", "0", "log")
	for _, x := range []int{len(before[0]) * 2 / 3, len(texts[0]) / 2, len(before[0]) / 3} {
		pos := starts[0] + int64(x)
		if got, want := readAt(t, file, pos, 200), atStarts(texts, starts, pos, 200); got != want {
			t.Fatalf("pread at %d after compaction: %.60q, want %.60q", pos, got, want)
		}
	}
	checkTiles(t, d, addr, "after compaction and seeking reads", starts)
	d.stop()
}
