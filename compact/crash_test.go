package compact_test

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

var crashCfg = map[string]string{
	"cleanup.policy": "compact", "segment.bytes": "1500", "index.interval.bytes": "200",
	"segment.index.bytes": "4096", "file.delete.delay.ms": "0",
}

var clockMs = int64(1_800_000_000_000)

func now() time.Time { return time.UnixMilli(clockMs) }

func openStore(t testing.TB, fs vfs.FS) (*logstore.Store, error) {
	return openAt(fs, "/data")
}

func openAt(fs vfs.FS, dir string) (*logstore.Store, error) {
	return logstore.Open(dir, logstore.Options{FS: fs, Now: now, Defaults: crashCfg, NoBackground: true,
		Jitter: func(int64) int64 { return 0 }})
}

// buildCrashLog writes a compacted topic with keys k0..k14 (updates,
// tombstones, null keys) in many small segments and closes it cleanly.
func buildCrashLog(t testing.TB) *vfs.CrashFS {
	fs := vfs.NewCrashFS()
	buildLog(t, fs, "/data", 60)
	return fs.Crash()
}

func buildLog(t testing.TB, fs vfs.FS, dir string, batches int) {
	st, err := openAt(fs, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	// A compacted topic refuses records without a key; they reach one, as
	// in Kafka, when its policy becomes compact after they were written.
	setPolicy(t, st, "delete")
	l, _ := st.Log("t", 0)
	rng := rand.New(rand.NewSource(7))
	for b := 0; b < batches; b++ {
		var recs []record.Record
		for i := 0; i < 1+rng.Intn(5); i++ {
			r := record.Record{Key: fmt.Appendf(nil, "k%d", rng.Intn(15)), Value: fmt.Appendf(nil, "v%d-%d", b, i)}
			switch rng.Intn(8) {
			case 0:
				r.Key = nil
			case 1:
				r.Value = nil
			}
			recs = append(recs, r)
		}
		if _, err := l.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy(t, st, "compact")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

func setPolicy(t testing.TB, st *logstore.Store, policy string) {
	t.Helper()
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "cleanup.policy", Value: policy}}); err != nil {
		t.Fatal(err)
	}
}

type rec struct {
	off        int64
	key, value string
	tomb       bool
}

func readAll(t testing.TB, l partlog.Log) []rec {
	t.Helper()
	segs, release := l.Segments()
	defer release()
	var out []rec
	for _, s := range segs {
		err := l.Read(s, s.Base, func(r *record.Record) bool {
			out = append(out, rec{off: r.Offset, key: string(r.Key), value: string(r.Value), tomb: r.Value == nil})
			return true
		})
		if err != nil {
			t.Fatalf("read segment %d: %v", s.Base, err)
		}
	}
	return out
}

// cleanOnce opens fs, runs one cleaning of every log and closes.
func cleanOnce(t testing.TB, fs vfs.FS) (compact.Summary, error) {
	return cleanAt(fs, "/data")
}

func cleanAt(fs vfs.FS, dir string) (compact.Summary, error) {
	st, err := openAt(fs, dir)
	if err != nil {
		return compact.Summary{}, err
	}
	c := compact.NewCleaner(compact.Options{Now: now, DedupeBufferSize: 1 << 16})
	sum, err := c.CleanAll(compact.Targets(st), false)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return sum, err
}

// stateOf opens fs (recovering it) and returns its records and the names
// of its partition directory.
func stateOf(t testing.TB, fs vfs.FS) ([]rec, []string) {
	t.Helper()
	return stateAt(t, fs, "/data")
}

func stateAt(t testing.TB, fs vfs.FS, dir string) ([]rec, []string) {
	t.Helper()
	st, err := openAt(fs, dir)
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer st.Close()
	l, err := st.Log("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, l)
	infos, err := fs.ReadDir(dir + "/t-0")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	return recs, names
}

// latest maps each key to its latest record.
func latest(recs []rec) map[string]rec {
	m := map[string]rec{}
	for _, r := range recs {
		if r.key != "" {
			m[r.key] = r
		}
	}
	return m
}

// checkBetween asserts that got lies between before and after: a subset
// of before, a superset of after, with every key's latest record intact.
func checkBetween(t *testing.T, step int, got, before, after []rec) {
	t.Helper()
	in := func(set []rec) map[rec]bool {
		m := map[rec]bool{}
		for _, r := range set {
			m[r] = true
		}
		return m
	}
	b, g := in(before), in(got)
	for _, r := range got {
		if !b[r] {
			t.Fatalf("step %d: record %+v was never written", step, r)
		}
	}
	for _, r := range after {
		if !g[r] {
			t.Fatalf("step %d: record %+v that cleaning keeps is lost", step, r)
		}
	}
	if fmt.Sprint(sorted(latest(got))) != fmt.Sprint(sorted(latest(before))) {
		t.Fatalf("step %d: latest values differ:\n got %v\nwant %v", step, sorted(latest(got)), sorted(latest(before)))
	}
	for i := 1; i < len(got); i++ {
		if got[i].off <= got[i-1].off {
			t.Fatalf("step %d: offsets out of order at %d: %d after %d", step, i, got[i].off, got[i-1].off)
		}
	}
}

func sorted(m map[string]rec) []rec {
	out := make([]rec, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// checkInterrupted checks the log of fs after a cleaning that a crash or
// fault interrupted at step: no temporary file is left and each replaced
// group holds the records of before or after the cleaning. It returns the
// records.
func checkInterrupted(t *testing.T, step int, fs vfs.FS, before, after []rec) []rec {
	t.Helper()
	got, names := stateOf(t, fs)
	noTempFiles(t, step, names)
	checkBetween(t, step, got, before, after)
	return got
}

// checkRecleans: cleaning the recovered log of fs gives after, the result
// of an undisturbed cleaning.
func checkRecleans(t *testing.T, step string, fs vfs.FS, after []rec) {
	t.Helper()
	if _, err := cleanOnce(t, fs); err != nil {
		t.Fatalf("%s: cleaning after recovery: %v", step, err)
	}
	if again, _ := stateOf(t, fs); fmt.Sprint(again) != fmt.Sprint(after) {
		t.Fatalf("%s: cleaning after recovery gives\n%v\nwant\n%v", step, again, after)
	}
}

func noTempFiles(t *testing.T, step int, names []string) {
	t.Helper()
	for _, n := range names {
		if strings.HasSuffix(n, ".cleaned") || strings.HasSuffix(n, ".swap") {
			t.Fatalf("step %d: temporary file %s left after reopening: %v", step, n, names)
		}
	}
}

// countingInjector calls at(k) before the k-th mutating operation once
// armed, and never fails anything.
type countingInjector struct {
	mu    sync.Mutex
	armed bool
	n     int
	at    func(k int, op vfs.Op, name string)
}

func (c *countingInjector) MaybeFail(op vfs.Op, name string) (bool, error) {
	if op == vfs.OpRead {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.at != nil {
		c.at(c.n, op, name)
	}
	return false, nil
}

// TestCrashAtEveryStepOfCleaning crashes a cleaning before each of its
// filesystem operations (writing .cleaned, each rename to .swap, to
// .deleted and to the final names, the deletes, directory fsyncs), keeping
// only what was durable, then reopens: the log must hold the records of
// before or after the cleaning (per replaced group), never lose a key's
// latest value, and have no temporary file left.
func TestCrashAtEveryStepOfCleaning(t *testing.T) {
	base := buildCrashLog(t)
	before, _ := stateOf(t, base.Crash())

	ref := base.Crash()
	inj := &countingInjector{}
	sum, err := cleanOnce(t, vfs.NewErrorFS(ref, inj))
	if err != nil || sum.Cleaned != 1 || sum.RecordsRemoved == 0 {
		t.Fatalf("reference cleaning: %v, %+v", err, sum)
	}
	ops := inj.n
	after, names := stateOf(t, ref.Crash())
	noTempFiles(t, ops+1, names)
	checkBetween(t, ops+1, after, before, after)
	if len(after) >= len(before) {
		t.Fatalf("cleaning removed nothing: %d records before, %d after", len(before), len(after))
	}

	for k := 1; k <= ops; k++ {
		fs := base.Crash()
		var snap, snapTorn *vfs.CrashFS
		var what string
		inj := &countingInjector{at: func(n int, op vfs.Op, name string) {
			if n == k {
				snap, what = fs.Crash(), op.String()+" "+name
				snapTorn = fs.CrashTorn(rand.New(rand.NewSource(int64(k))))
			}
		}}
		if _, err := cleanOnce(t, vfs.NewErrorFS(fs, inj)); err != nil {
			t.Fatalf("cleaning %d: %v", k, err)
		}
		if snap == nil {
			t.Fatalf("step %d never reached (%d ops)", k, inj.n)
		}
		got := checkInterrupted(t, k, snap, before, after)
		t.Logf("crash before op %d (%s): %d records", k, what, len(got))
		checkInterrupted(t, k, snapTorn, before, after)
		checkRecleans(t, fmt.Sprint("step ", k), snap, after)
	}
}

// TestFailuresDuringCleaning fails the k-th write, sync, create or rename
// of a cleaning with ENOSPC/EIO: the cleaning reports the error, the log
// (reopened) holds the records of before or after each replaced group
// with every key's latest value, and no temporary file is left; a cleaning
// after the disk recovers gives the result of an undisturbed one.
func TestFailuresDuringCleaning(t *testing.T) {
	base, before, after := crashLogStates(t)

	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpCreate, vfs.OpRename, vfs.OpSyncDir} {
		for k := 1; ; k++ {
			fs := base.Crash()
			inj := vfs.FailNth(op, k, syscall.ENOSPC)
			if op == vfs.OpSync || op == vfs.OpSyncDir {
				inj.Err = syscall.EIO
			}
			_, err := cleanOnce(t, vfs.NewErrorFS(fs, inj))
			if inj.Fired() == 0 {
				break // fewer than k such operations
			}
			step := fmt.Sprintf("%v #%d", op, k)
			if err == nil {
				t.Logf("%s: failure not reported by the cleaning (absorbed by the store)", step)
			} else if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EIO) {
				t.Logf("%s: error %v does not wrap the injected errno", step, err)
			}
			checkInterrupted(t, k, fs, before, after)
			checkRecleans(t, step, fs, after)
		}
	}
}
