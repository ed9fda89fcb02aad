package systest

import (
	"bytes"
	"encoding/json"
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
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// faultCase is one hostile or failing condition around a data directory
// (the damage table covers damaged bytes): what is set up and what partfs
// must do about it, checked inside run.
type faultCase struct {
	name string
	run  func(t *testing.T, dir string)
}

func faultCases() []faultCase {
	var cases []faultCase
	cases = append(cases, symlinkFaults()...)
	cases = append(cases, settingFaults()...)
	cases = append(cases, permissionFaults()...)
	cases = append(cases, limitFaults()...)
	cases = append(cases, retentionFaults()...)
	cases = append(cases, layoutFaults()...)
	cases = append(cases, readTruthFaults()...)
	for i, dc := range offsetDamage("") {
		cases = append(cases, faultCase{name: "offsets: " + dc.name, run: func(t *testing.T, dir string) {
			m := buildDataDir(t, dir)
			runDamage(t, dir, offsetDamage(dir)[i], m)
		}})
	}
	return cases
}

func TestFaultTable(t *testing.T) {
	root := t.TempDir()
	for i, tc := range faultCases() {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, filepath.Join(root, fmt.Sprint(i))) })
	}
}

// outsider is a file outside the data directory that partfs must never
// touch.
type outsider struct {
	path string
	data []byte
}

func newOutsider(t *testing.T, dir string) outsider {
	t.Helper()
	o := outsider{path: filepath.Join(dir+".outside", "victim"), data: []byte("a file outside the data directory\n")}
	if err := os.MkdirAll(filepath.Dir(o.path), 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, o.path, o.data)
	return o
}

func (o outsider) untouched(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(o.path); err != nil || !bytes.Equal(b, o.data) {
		t.Errorf("%s outside the data directory was changed: %q %v", o.path, b, err)
	}
}

// symlinkOver replaces path with a symbolic link to target.
func symlinkOver(t *testing.T, path, target string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func unclean(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatal(err)
	}
}

// jsonlOffsets reads log.jsonl of part through the mount.
func jsonlOffsets(d *daemon, part ...string) ([]int64, error) {
	raw, err := os.ReadFile(d.path(append(part, "log.jsonl")...))
	recs, perr := parseJSONL(raw)
	offs := make([]int64, len(recs))
	for i, r := range recs {
		offs[i] = r.Offset
	}
	if perr != nil {
		return offs, perr
	}
	return offs, err
}

// closedTopicServed checks a mount where topic t is not opened: its log
// answers EIO, the daemon log says why (all of says on one line), and
// topic z is served whole.
func closedTopicServed(t *testing.T, d *daemon, says ...string) {
	t.Helper()
	if _, err := jsonlOffsets(d, "t", "0"); testutil.Errno(err) != syscall.EIO {
		t.Errorf("read t/0/log.jsonl: %v, want EIO", err)
	}
	if !d.waitLog(5*time.Second, says...) {
		t.Errorf("no daemon log line says %q:\n%s", says, tail(d.log.String(), 3000))
	}
	offs, err := jsonlOffsets(d, "z", "0")
	if err != nil || len(offs) != 200 || offs[199] != 199 {
		t.Errorf("z/0/log.jsonl: %d records, %v; want 200 (other topics open)", len(offs), err)
	}
}

func symlinkFaults() []faultCase {
	// mountLinked builds the data directory, replaces file of t-0 with a
	// link to a file outside, mounts (unclean unless clean) and checks that
	// the partition is reported and skipped and the outside file is intact.
	linked := func(name, file string, clean bool) faultCase {
		return faultCase{name: name, run: func(t *testing.T, dir string) {
			buildDataDir(t, dir)
			out := newOutsider(t, dir)
			path := filepath.Join(dir, "t-0", file)
			symlinkOver(t, path, out.path)
			if !clean {
				unclean(t, dir)
			}
			d := startDaemon(t, dir, dir+".mnt")
			closedTopicServed(t, d, "t-0", "not opened", "symbolic link")
			d.stop()
			out.untouched(t)
			if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link %s was replaced: %v %v", path, fi, err)
			}
			if d.panicked() {
				t.Fatalf("daemon panicked:\n%s", d.log)
			}
		}}
	}
	return []faultCase{
		linked("active .log is a symlink, unclean", "00000000000000000033.log", false),
		linked("sealed .index is a symlink, unclean", "00000000000000000011.index", false),
		linked("sealed .index is a symlink, clean", "00000000000000000011.index", true),
		linked("active .timeindex is a symlink, unclean", "00000000000000000033.timeindex", false),
		linked("sealed .log is a symlink, clean", "00000000000000000000.log", true),
		{name: "a link beside the segments is not served by segments/", run: func(t *testing.T, dir string) {
			buildDataDir(t, dir)
			out := newOutsider(t, dir)
			if err := os.Chmod(out.path, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"notes.txt", "00000000000000000050.snapshot"} {
				symlinkOver(t, filepath.Join(dir, "t-0", name), out.path)
			}
			d := startDaemon(t, dir, dir+".mnt")
			for _, name := range []string{"notes.txt", "00000000000000000050.snapshot"} {
				b, err := os.ReadFile(d.path("t", "0", "segments", name))
				if testutil.Errno(err) != syscall.ENOENT {
					t.Errorf("read segments/%s: %q %v, want ENOENT", name, b, err)
				}
			}
			ents, err := os.ReadDir(d.path("t", "0", "segments"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name() == "notes.txt" || strings.HasSuffix(e.Name(), ".snapshot") {
					t.Errorf("ls segments/ lists %s", e.Name())
				}
			}
			if offs, err := jsonlOffsets(d, "t", "0"); err != nil || len(offs) != tEnd {
				t.Errorf("t/0/log.jsonl: %d records, %v; want %d", len(offs), err, tEnd)
			}
			d.stop()
			out.untouched(t)
		}},
		{name: "partition directory is a symlink", run: func(t *testing.T, dir string) {
			buildDataDir(t, dir)
			moved := dir + ".outside-t-0"
			if err := os.Rename(filepath.Join(dir, "t-0"), moved); err != nil {
				t.Fatal(err)
			}
			before := snapshotDir(t, moved)
			symlinkOver(t, filepath.Join(dir, "t-0"), moved)
			unclean(t, dir)
			d := startDaemon(t, dir, dir+".mnt")
			if _, err := os.Stat(d.path("t")); testutil.Errno(err) != syscall.ENOENT {
				t.Errorf("stat t: %v, want ENOENT (the linked partition is not followed)", err)
			}
			if !d.waitLog(5*time.Second, "t-0", "symbolic link") {
				t.Errorf("no log line reports the linked partition directory:\n%s", tail(d.log.String(), 3000))
			}
			d.stop()
			if after := snapshotDir(t, moved); after != before {
				t.Errorf("the directory outside changed:\n%s\nwas\n%s", after, before)
			}
		}},
	}
}

// snapshotDir renders every file of dir with its size and a digest of its
// bytes.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s %d %x\n", fi.Name(), len(data), sumBytes(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sumBytes(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// storedTopics rewrites partfs-topics.json with topic t's overrides; z
// keeps its records forever.
func storedTopics(t *testing.T, dir string, tOverrides map[string]string) {
	t.Helper()
	path := filepath.Join(dir, "partfs-topics.json")
	var doc struct {
		Version int                          `json:"version"`
		Topics  map[string]map[string]string `json:"topics"`
	}
	if err := json.Unmarshal(testutil.ReadFile(t, path), &doc); err != nil {
		t.Fatal(err)
	}
	doc.Topics["t"] = tOverrides
	doc.Topics["z"]["retention.ms"] = "-1"
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, path, b)
}

// retentionRun opens dir with retention.ms=1 as the mount's default and
// runs retention once: a topic that fell back to the defaults would lose
// its data.
func retentionRun(t *testing.T, dir string) (*logstore.Store, testutil.Logger) {
	t.Helper()
	lg := testutil.NewLogger()
	st, err := logstore.Open(dir, logstore.Options{Logger: lg.Entry, NoBackground: true,
		Defaults: map[string]string{"retention.ms": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := st.RunMaintenance(true, false); err != nil {
		t.Fatal(err)
	}
	return st, lg
}

func settingFaults() []faultCase {
	return []faultCase{
		{name: "unknown key in the stored topic configuration", run: func(t *testing.T, dir string) {
			m := buildDataDir(t, dir)
			storedTopics(t, dir, map[string]string{"retention.ms": "-1", "cleanup.policy": "compact",
				"segment.bytes": "2000", "some.future.key": "1"})
			st, lg := retentionRun(t, dir)
			got := readPartition(t, st, "t", 0, m[tpKey("t", 0)])
			if got.err != nil || len(got.offsets) != tEnd || got.start != 0 {
				t.Errorf("t after retention: start %d, %d records, %v; want all %d kept", got.start, len(got.offsets), got.err, tEnd)
			}
			cfg, err := st.TopicConfig("t")
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range cfg {
				if kv.Key == "cleanup.policy" && kv.Value != "compact" || kv.Key == "retention.ms" && kv.Value != "-1" {
					t.Errorf("stored %s lost: %s", kv.Key, kv.Value)
				}
			}
			if !strings.Contains(lg.Buf.String(), "some.future.key") {
				t.Errorf("the unknown key is not reported:\n%s", lg.Buf)
			}
			if err := st.SetTopicConfig("z", []partlog.KV{{Key: "retention.ms", Value: "-1"}}); err != nil {
				t.Fatal(err)
			}
			if err := st.SetTopicConfig("t", []partlog.KV{{Key: "another.key", Value: "1"}}); !errors.Is(err, partlog.ErrInvalid) {
				t.Errorf("writing an unknown key: %v, want EINVAL", err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if s := string(testutil.ReadFile(t, filepath.Join(dir, "partfs-topics.json"))); !strings.Contains(s, `"some.future.key": "1"`) {
				t.Errorf("the unknown key was not kept:\n%s", s)
			}
		}},
		{name: "bad value in the stored topic configuration", run: func(t *testing.T, dir string) {
			buildDataDir(t, dir)
			storedTopics(t, dir, map[string]string{"retention.ms": "-1", "segment.bytes": "banana"})
			before := snapshotDir(t, filepath.Join(dir, "t-0"))
			st, lg := retentionRun(t, dir)
			if _, err := st.Partition("t", 0); !errors.Is(err, partlog.ErrCorrupt) {
				t.Errorf("partition t-0: %v, want it unopened (EIO)", err)
			}
			line := false
			for _, l := range strings.Split(lg.Buf.String(), "\n") {
				line = line || strings.Contains(l, "topic=t") && strings.Contains(l, "segment.bytes") && strings.Contains(l, "banana")
			}
			if !line {
				t.Errorf("no log line names topic, key and value:\n%s", lg.Buf)
			}
			if err := st.SetTopicConfig("z", []partlog.KV{{Key: "retention.ms", Value: "-1"}}); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if s := string(testutil.ReadFile(t, filepath.Join(dir, "partfs-topics.json"))); !strings.Contains(s, `"banana"`) {
				t.Errorf("the stored value was not kept:\n%s", s)
			}
			d := startDaemon(t, dir, dir+".mnt", "--config", "retention.ms=1")
			closedTopicServed(t, d, "topic=t", "segment.bytes", "banana")
			d.stop()
			if after := snapshotDir(t, filepath.Join(dir, "t-0")); after != before {
				t.Errorf("files of the unopened topic changed:\n%s\nwas\n%s", after, before)
			}
		}},
	}
}

// unclosedWrites writes n MiB to path in 1 MiB write()s on one open file
// and returns the errno of each write.
func unclosedWrites(t *testing.T, path string, n int, chunk []byte) []syscall.Errno {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var errs []syscall.Errno
	for i := 0; i < n; i++ {
		_, err := f.Write(chunk)
		errs = append(errs, testutil.Errno(err))
	}
	f.Close()
	return errs
}

// boundedWrite checks that the write of an unclosed file that passes
// limit bytes, and every one after it, fails with EFBIG, and that the
// daemon's memory does not grow with what was written.
func boundedWrite(t *testing.T, d *daemon, path string, limit int, chunk []byte) {
	t.Helper()
	before := d.stats().rssKB
	errs := unclosedWrites(t, path, 64, chunk)
	for i, e := range errs {
		want := syscall.Errno(0)
		if (i+1)*len(chunk) > limit {
			want = syscall.EFBIG
		}
		if e != want {
			t.Errorf("write %d (%d MiB written): errno %v, want %v", i, i+1, e, want)
		}
	}
	if grew := d.stats().rssKB - before; grew > 24<<10 {
		t.Errorf("daemon RSS grew by %d KiB over 64 MiB of refused writes", grew)
	}
}

// fillDisk writes path until the filesystem under it is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if testutil.Errno(err) != syscall.ENOSPC {
				t.Fatal(err)
			}
			return
		}
	}
}

func retentionFaults() []faultCase {
	return []faultCase{
		{name: "cleaner out of space: logged with topic, partition and file, counted in .metrics", run: func(t *testing.T, dir string) {
			disk, ballast := smallDisk(t, "8m")
			d := startDaemon(t, filepath.Join(disk, "data"), dir+".mnt", "--config", "log.cleaner.backoff.ms=100")
			mkTopic(t, d, "t", 1, "cleanup.policy=compact", "segment.bytes=20000", "min.cleanable.dirty.ratio=0.01",
				"min.compaction.lag.ms=2000")
			var lines strings.Builder
			for i := 0; i < 300; i++ {
				fmt.Fprintf(&lines, "{\"key\":\"k%d\",\"value\":\"%d %s\"}\n", i%10, i, strings.Repeat("x", 400))
			}
			if err := appendTo(d.path("t", "0", "log.jsonl"), []byte(lines.String()))(); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			fillDisk(t, ballast)
			if !d.waitLog(15*time.Second, "cleaning failed", "topic=t", "partition=0", "file=", ".cleaned") {
				t.Errorf("no log line names topic, partition and file of the failed cleaning:\n%s", tail(d.log.String(), 3000))
			}
			metrics := string(testutil.ReadFile(t, d.path(".metrics")))
			if !strings.Contains(metrics, `partfs_background_failures_total{partition="0",task="clean",topic="t"}`) {
				t.Errorf(".metrics does not count the failed cleaning:\n%s", metrics)
			}
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			// compaction may have run since; the latest value of each key stays
			offs, err := jsonlOffsets(d, "t", "0")
			if err != nil || len(offs) < 10 || fmt.Sprint(offs[len(offs)-10:]) != "[290 291 292 293 294 295 296 297 298 299]" {
				t.Errorf("t/0 after the failed cleaning: %d records ending %v, %v; want the last 10", len(offs), offs[max(len(offs)-10, 0):], err)
			}
			d.stop()
		}},
		{name: "retention.ms=1 on a quiet topic deletes its active segment too", run: func(t *testing.T, dir string) {
			d := startDaemon(t, dir, dir+".mnt", "--config", "log.retention.check.interval.ms=100")
			mkTopic(t, d, "t", 1)
			if err := appendTo(d.path("t", "0", "log"), []byte(strings.Repeat("a quiet line\n", 10)))(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(d.path("t", "config"), []byte("retention.ms=1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for statField(t, d, "t/0", "log_start_offset") != 10 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if start, end := statField(t, d, "t/0", "log_start_offset"), statField(t, d, "t/0", "log_end_offset"); start != 10 || end != 10 {
				t.Errorf("after retention.ms=1: log start %d end %d, want 10 10 (segment.ms is 7 days)", start, end)
			}
			if offs, err := jsonlOffsets(d, "t", "0"); err != nil || len(offs) != 0 {
				t.Errorf("log.jsonl serves %v %v, want nothing", offs, err)
			}
			d.stop()
		}},
	}
}

func limitFaults() []faultCase {
	mib := bytes.Repeat([]byte("v"), 1<<20)
	return []faultCase{
		{name: "unclosed @key/K write past max.message.bytes: EFBIG, memory bounded", run: func(t *testing.T, dir string) {
			d := startDaemon(t, dir, dir+".mnt")
			mkTopic(t, d, "t", 1, "max.message.bytes=3000000")
			boundedWrite(t, d, d.path("t", "0", "@key", "big"), 3000000, mib)
			if _, err := os.Stat(d.path("t", "0", "@key", "big")); testutil.Errno(err) != syscall.ENOENT {
				t.Errorf("@key/big after the refused value: %v, want ENOENT (nothing appended)", err)
			}
			d.stop()
		}},
		{name: "unclosed config write of an endless line: EFBIG, memory bounded", run: func(t *testing.T, dir string) {
			d := startDaemon(t, dir, dir+".mnt")
			mkTopic(t, d, "t", 1)
			before := configMap(t, d.path("t", "config"))
			boundedWrite(t, d, d.path("t", "config"), 0, mib)
			if after := configMap(t, d.path("t", "config")); !equalMaps(before, after) {
				t.Errorf("config changed: %v", after)
			}
			d.stop()
		}},
		{name: "small segment.index.bytes: refused below one time-index entry, rolls when full above", run: func(t *testing.T, dir string) {
			d := startDaemon(t, dir, dir+".mnt")
			mkTopic(t, d, "t", 1)
			for _, v := range []string{"4", "11"} {
				err := os.WriteFile(d.path("t", "config"), []byte("segment.index.bytes="+v+"\n"), 0o644)
				if testutil.Errno(err) != syscall.EINVAL {
					t.Errorf("segment.index.bytes=%s: %v, want EINVAL", v, err)
				}
			}
			if err := os.WriteFile(d.path("t", "config"), []byte("segment.index.bytes=12\nindex.interval.bytes=10\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var lines strings.Builder
			for i := 0; i < 30; i++ {
				fmt.Fprintf(&lines, "line %d of a topic whose index holds one entry\n", i)
				if i%10 == 9 {
					if err := appendTo(d.path("t", "0", "log"), []byte(lines.String()))(); err != nil {
						t.Fatalf("append: %v", err)
					}
					lines.Reset()
				}
			}
			d.stop() // requires exit 0
			if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
				t.Errorf("no clean-shutdown marker after the unmount: %v", err)
			}
			d.restart()
			if offs, err := jsonlOffsets(d, "t", "0"); err != nil || len(offs) != 30 {
				t.Errorf("after a remount: %d records, %v; want 30", len(offs), err)
			}
			d.stop()
		}},
	}
}

// partialTopics writes topic gap with partitions 0..3 and topic u with
// 0..2, one record each, then removes gap-0..gap-2 and u-1: this data
// directory holds only some partitions of each (the others on other disks).
func partialTopics(t *testing.T, dir string) {
	t.Helper()
	st, err := openStore(t, dir, testutil.NewLogger().Entry)
	if err != nil {
		t.Fatal(err)
	}
	for topic, n := range map[string]int{"gap": 4, "u": 3} {
		if err := st.CreateTopic(topic); err != nil {
			t.Fatal(err)
		}
		for p := 0; p < n; p++ {
			if p > 0 {
				if err := st.AddPartition(topic, p); err != nil {
					t.Fatal(err)
				}
			}
			l, err := st.Partition(topic, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append([]record.Record{{Value: []byte(fmt.Sprint(topic, p))}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"gap-0", "gap-1", "gap-2", "u-1"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
}

func layoutFaults() []faultCase {
	return []faultCase{
		{name: "strict input: altered JSON and colliding topic names are EINVAL", run: func(t *testing.T, dir string) {
			d := startDaemon(t, dir, dir+".mnt")
			mkTopic(t, d, "a.b", 1)
			if err := os.Mkdir(d.path("a_b"), 0o755); testutil.Errno(err) != syscall.EINVAL {
				t.Errorf("mkdir a_b beside a.b: %v, want EINVAL", err)
			}
			for _, line := range []string{"{\"value\":\"a\xffb\"}", `{"value":"\ud800"}`, `{"Value":"x"}`, `{"value":"x","value":"y"}`} {
				if err := appendTo(d.path("a.b", "0", "log.jsonl"), []byte(line+"\n"))(); testutil.Errno(err) != syscall.EINVAL {
					t.Errorf("append %q: %v, want EINVAL", line, err)
				}
			}
			if offs, err := jsonlOffsets(d, "a.b", "0"); err != nil || len(offs) != 0 {
				t.Errorf("a.b/0 after refused lines: %v %v", offs, err)
			}
			d.stop()
		}},
		{name: "a topic with only some of its partitions lists what exists", run: func(t *testing.T, dir string) {
			partialTopics(t, dir)
			d := startDaemon(t, dir, dir+".mnt")
			for topic, want := range map[string]string{"gap": "[3 config]", "u": "[0 2 config]"} {
				ents, err := os.ReadDir(d.path(topic))
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
					if _, err := os.Stat(d.path(topic, e.Name())); err != nil {
						t.Errorf("ls %s lists %s, which gives %v", topic, e.Name(), err)
					}
				}
				if fmt.Sprint(names) != want {
					t.Errorf("ls %s: %v, want %s", topic, names, want)
				}
			}
			for _, p := range []string{"gap/0", "gap/2", "u/1"} {
				if _, err := os.Stat(d.path(p)); testutil.Errno(err) != syscall.ENOENT {
					t.Errorf("stat %s: %v, want ENOENT", p, err)
				}
			}
			if offs, err := jsonlOffsets(d, "u", "2"); err != nil || fmt.Sprint(offs) != "[0]" {
				t.Errorf("u/2/log.jsonl: %v %v", offs, err)
			}
			d.stop()
		}},
		{name: "mkdir of a partition of a topic written before Kafka 2.8 (no partition.metadata)", run: func(t *testing.T, dir string) {
			buildDataDir(t, dir)
			if err := os.Remove(filepath.Join(dir, "t-0", "partition.metadata")); err != nil {
				t.Fatal(err)
			}
			d := startDaemon(t, dir, dir+".mnt")
			if err := os.Mkdir(d.path("t", "1"), 0o755); err != nil {
				t.Fatalf("mkdir t/1: %v", err)
			}
			if err := appendTo(d.path("t", "1", "log"), []byte("a line\n"))(); err != nil {
				t.Errorf("append to t/1: %v", err)
			}
			d.stop()
			d.restart()
			if offs, err := jsonlOffsets(d, "t", "1"); err != nil || fmt.Sprint(offs) != "[0]" {
				t.Errorf("t/1 after a remount: %v %v", offs, err)
			}
			d.stop()
		}},
	}
}

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
