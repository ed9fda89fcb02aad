package systest

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/partfs/partfs/record"
)

// crashTopics: several partitions and codecs, small segments, one compacted
// topic fed with keys through log.jsonl, one whose retention deletes its
// oldest segments as it grows.
var crashTopics = []struct {
	name       string
	partitions int
	cfg        []string
}{
	{"plain", 2, []string{"compression.type=none", "segment.bytes=16384", "index.interval.bytes=512"}},
	{"gz", 1, []string{"compression.type=gzip", "segment.bytes=8192"}},
	{"zs", 1, []string{"compression.type=zstd", "segment.bytes=8192"}},
	{"lz", 1, []string{"compression.type=lz4", "segment.bytes=8192"}},
	{"sn", 1, []string{"compression.type=snappy", "segment.bytes=8192"}},
	{"kv", 1, []string{"cleanup.policy=compact", "compression.type=lz4", "segment.bytes=4096",
		"min.cleanable.dirty.ratio=0.01", "min.compaction.lag.ms=0", "delete.retention.ms=0", "file.delete.delay.ms=0"}},
	{"rt", 1, []string{"compression.type=none", "segment.bytes=4096", "retention.bytes=8192", "file.delete.delay.ms=0"}},
}

// crashAppenders: plain and jsonl writers on the partitions above.
func crashAppenders(seed int64) []*appender {
	specs := []struct{ part, file string }{
		{"plain/0", "log"}, {"plain/0", "log.jsonl"}, {"plain/1", "log"}, {"gz/0", "log.jsonl"},
		{"zs/0", "log"}, {"lz/0", "log.jsonl"}, {"sn/0", "log"}, {"kv/0", "log.jsonl"}, {"rt/0", "log"},
	}
	var out []*appender
	for i, s := range specs {
		out = append(out, &appender{id: fmt.Sprintf("w%d", i), part: s.part, file: s.file,
			keyed: s.part == "kv/0", rng: rand.New(rand.NewSource(seed + int64(i)))})
	}
	return out
}

// cleanerFlags make the background cleaner and retention look often.
var cleanerFlags = []string{"--config", "log.cleaner.backoff.ms=50", "--config", "log.retention.check.interval.ms=100"}

// removalOf says what may remove records of a crash partition.
func removalOf(part string) removal {
	switch part {
	case "kv/0":
		return compacted
	case "rt/0":
		return retained
	}
	return keepAll
}

type crashStats struct {
	iters, generations, acked, dropped, compactedAway, retainedAway, doubleKills, rolledGens int
	writeErrs                                                                                map[string]int
}

func TestCrashLoop(t *testing.T) {
	minIters, budget := testSize(t, "PARTFS_CRASH_ITERS", 20, 100), 3*time.Minute
	if long() {
		budget = 0
	}
	if os.Getenv("PARTFS_CRASH_ITERS") != "" {
		budget = 0
	}
	if dl, ok := t.Deadline(); ok && budget > 0 {
		// leave the rest of the suite its time under go test's -timeout
		budget = min(budget, time.Until(dl)/4)
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	st := crashStats{writeErrs: map[string]int{}}
	start := time.Now()
	var g *crashGen
	for it := 0; it < minIters || (budget > 0 && time.Since(start) < budget); it++ {
		if it%10 == 0 {
			if g != nil {
				g.finish(&st)
			}
			g = newCrashGen(t, filepath.Join(root, fmt.Sprint(it/10)), seed+int64(it))
			st.generations++
		}
		g.iterate(it, rng, &st)
		st.iters++
		if t.Failed() {
			t.Fatalf("iteration %d failed (seed %d); data dir %s", it, seed, g.d.data)
		}
	}
	g.finish(&st)
	if st.rolledGens == 0 {
		t.Errorf("no generation rolled every topic to a second segment: segments too large for the test")
	}
	if st.compactedAway == 0 {
		t.Errorf("compaction removed nothing: the cleaner did not run")
	}
	if st.retainedAway == 0 {
		t.Errorf("retention removed nothing: it did not run")
	}
	t.Logf("%d iterations (%d with a second kill right after the remount) in %d generations in %v: %d writes acknowledged and found, %d unacknowledged writes absent, %d records removed by compaction, %d acknowledged records by retention; writer errors at the kill: %v",
		st.iters, st.doubleKills, st.generations, time.Since(start).Round(time.Second), st.acked, st.dropped, st.compactedAway, st.retainedAway, st.writeErrs)
}

// crashGen is one data directory used for up to 10 crash iterations.
type crashGen struct {
	t    *testing.T
	d    *daemon
	apps []*appender
}

func newCrashGen(t *testing.T, dir string, seed int64) *crashGen {
	d := startDaemon(t, filepath.Join(dir, "data"), filepath.Join(dir, "mnt"), cleanerFlags...)
	for _, tp := range crashTopics {
		mkTopic(t, d, tp.name, tp.partitions, tp.cfg...)
	}
	return &crashGen{t: t, d: d, apps: crashAppenders(seed)}
}

// iterate: appenders run, SIGKILL at a random moment, remount, verify,
// clean stop, partfs check, no leftovers, mount again.
func (g *crashGen) iterate(it int, rng *rand.Rand, st *crashStats) {
	t := g.t
	done := make(chan []error)
	go func() { done <- runAppenders(g.d, g.apps, it, nil) }()
	time.Sleep(time.Duration(20+rng.Intn(600)) * time.Millisecond)
	g.d.kill9()
	for _, err := range <-done {
		if err != nil && !deadMountErr(err) {
			t.Errorf("iteration %d: unexpected writer error at the kill: %v", it, err)
		}
		if err != nil {
			st.writeErrs[errName(err)]++
		}
	}
	g.d.restart()
	if rng.Intn(5) == 0 {
		// a second crash right after recovery (cleaner and checkpoints starting)
		time.Sleep(time.Duration(rng.Intn(50)) * time.Millisecond)
		g.d.kill9()
		st.doubleKills++
		g.d.restart()
	}
	if g.d.panicked() {
		t.Fatalf("daemon panicked:\n%s", g.d.log)
	}
	g.verify()
	g.d.stop()
	if out, code := runPartfs(t, "check", g.d.data); code != 0 {
		t.Fatalf("iteration %d: partfs check after a clean stop: exit %d\n%s", it, code, tail(out, 4000))
	}
	if left := tempLeftovers(t, g.d.data); len(left) > 0 {
		t.Fatalf("iteration %d: leftover temporary files after a clean stop: %v", it, left)
	}
	g.d.restart()
}

// verify checks every partition through the mount and returns how many
// records compaction and retention removed.
func (g *crashGen) verify() (compactedAway, retainedAway int) {
	byPart := map[string][]*appender{}
	for _, a := range g.apps {
		byPart[a.part] = append(byPart[a.part], a)
	}
	for part, apps := range byPart {
		rm := removalOf(part)
		gone := verifyPartition(g.t, g.d, part, apps, rm)
		if rm == retained {
			retainedAway += gone
		} else {
			compactedAway += gone
		}
	}
	return compactedAway, retainedAway
}

func (g *crashGen) finish(st *crashStats) {
	c, r := g.verify()
	st.compactedAway += c
	st.retainedAway += r
	for _, a := range g.apps {
		for _, gr := range a.groups {
			switch gr.state {
			case present:
				st.acked++
			case dropped:
				st.dropped++
			}
		}
	}
	g.d.stop()
	if g.checkCodecs() {
		st.rolledGens++
	}
}

// checkCodecs: the batches on disk use each topic's compression.type. It
// reports whether every topic rolled to a second segment.
func (g *crashGen) checkCodecs() bool {
	rolled := true
	want := map[string]record.Codec{"plain-0": record.None, "gz-0": record.Gzip, "zs-0": record.Zstd,
		"lz-0": record.LZ4, "sn-0": record.Snappy, "kv-0": record.LZ4}
	for dir, codec := range want {
		segs := segmentFiles(g.t, filepath.Join(g.d.data, dir))
		rolled = rolled && len(segs) >= 2
		for _, b := range batchesOf(g.t, segs[0]) {
			if b.codec != codec {
				g.t.Fatalf("%s: batch at %d has codec %d, want %d", segs[0], b.pos, b.codec, codec)
			}
		}
	}
	return rolled
}

func errName(err error) string {
	for _, e := range []error{errENOTCONN, errECONNABORTED, errEIO, errENOENT} {
		if errorsIs(err, e) {
			return e.Error()
		}
	}
	return err.Error()
}
