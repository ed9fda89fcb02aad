package systest

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// group is what one write() sent: its values (and keys, for keyed writers).
type group struct {
	values []string
	keys   []string
	// state: pending until the first check after the write; then present
	// (acknowledged or found) or dropped (not acknowledged and not found).
	state groupState
}

type groupState int

const (
	pending groupState = iota
	present
	dropped
)

// appender writes unique lines to one file of one partition and remembers
// every write and whether it was acknowledged.
type appender struct {
	id     string
	file   string // "log" or "log.jsonl"
	part   string // "topic/n"
	keyed  bool   // jsonl with keys from a small set (compacted topic)
	rng    *rand.Rand
	groups []*group
}

// run writes until stop is closed or a write fails; iter makes values unique.
func (a *appender) run(path string, iter int, stop <-chan struct{}) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return nil
		default:
		}
		g := a.newGroup(iter, seq)
		a.groups = append(a.groups, g)
		if _, err := f.Write(a.encode(g)); err != nil {
			return err
		}
		g.state = present // acknowledged
		time.Sleep(time.Duration(1+a.rng.Intn(3)) * time.Millisecond)
	}
}

func (a *appender) newGroup(iter, seq int) *group {
	g := &group{}
	for i := 0; i < 1+a.rng.Intn(4); i++ {
		g.values = append(g.values, fmt.Sprintf("%s.i%d.s%d.l%d", a.id, iter, seq, i))
		if a.keyed {
			g.keys = append(g.keys, fmt.Sprintf("k%02d", a.rng.Intn(20)))
		}
	}
	return g
}

func (a *appender) encode(g *group) []byte {
	var b bytes.Buffer
	for i, v := range g.values {
		switch {
		case a.file == "log":
			b.WriteString(v + "\n")
		case a.keyed:
			fmt.Fprintf(&b, "{\"key\":%q,\"value\":%q}\n", g.keys[i], v)
		default:
			fmt.Fprintf(&b, "{\"value\":%q,\"headers\":[[\"h\",\"x\"]]}\n", v)
		}
	}
	return b.Bytes()
}

// removal says what may take a partition's records away between checks.
type removal int

const (
	keepAll   removal = iota // nothing: offsets contiguous from 0
	compacted                // the cleaner: superseded records of a key
	retained                 // retention: whole segments from the start
)

// partState is what the mount serves of one partition now.
type partState struct {
	recs []jsonRec
	// start is the first served record's offset (the log end when none is
	// served): retention may advance log_start_offset while log.jsonl is
	// read, so stat's value, read before, is only a lower bound of it.
	start int64
	end   int64 // log_end_offset from stat, read after
}

func readPartState(t testing.TB, d *daemon, part string) partState {
	t.Helper()
	var ps partState
	logStart := statField(t, d, part, "log_start_offset")
	recs, err := parseJSONL(testutil.ReadFile(t, d.path(part, "log.jsonl")))
	if err != nil {
		t.Fatalf("%s/log.jsonl: %v", part, err)
	}
	ps.recs = recs
	ps.end = statField(t, d, part, "log_end_offset")
	ps.start = ps.end
	if len(ps.recs) > 0 {
		ps.start = ps.recs[0].Offset
	}
	if ps.start < logStart {
		t.Fatalf("%s: record at offset %d below the log start offset %d", part, ps.start, logStart)
	}
	return ps
}

// statField reads one number from a partition's stat file.
func statField(t testing.TB, d *daemon, part, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(string(testutil.ReadFile(t, d.path(part, "stat"))), "\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatalf("%s/stat %s: %v", part, line, err)
			}
			return n
		}
	}
	t.Fatalf("%s/stat has no %s", part, name)
	return 0
}

// where is a written value's place: appender, group, line.
type where struct {
	a    *appender
	g, i int
}

// verifyPartition checks one partition against its appenders and resolves
// their pending groups. It returns how many records were removed (by
// compaction or retention, as rm allows).
func verifyPartition(t testing.TB, d *daemon, part string, apps []*appender, rm removal) (removed int) {
	t.Helper()
	ps := readPartState(t, d, part)
	seen, found := scanServed(t, part, ps, indexValues(apps), rm)
	total, gone := resolveGroups(t, part, apps, found, rm)
	if rm == compacted {
		checkLatestPerKey(t, part, apps, seen)
	} else if err := comparePlain(d, part, ps, rm == retained); err != nil {
		t.Fatal(err)
	}
	switch {
	case rm == retained && ps.end-ps.start != total:
		t.Fatalf("%s: offsets %d..%d, but %d records were appended after those retention removed", part, ps.start, ps.end, total)
	case rm != retained && ps.end != total:
		t.Fatalf("%s: log end offset %d, but %d records were appended", part, ps.end, total)
	}
	if rm == compacted {
		gone = int(total) - len(ps.recs)
	}
	return gone
}

// indexValues maps every value ever written by apps to where it was written.
func indexValues(apps []*appender) map[string]where {
	index := map[string]where{}
	for _, a := range apps {
		for gi, g := range a.groups {
			for i, v := range g.values {
				index[v] = where{a, gi, i}
			}
		}
	}
	return index
}

// scanServed checks each served record: written, once, not a write already
// found absent, offsets increasing (contiguous from the log start offset
// unless compacted), each appender's records in its write order. It returns
// the values seen and how many records of each group were found.
func scanServed(t testing.TB, part string, ps partState, index map[string]where, rm removal) (map[string]bool, map[*group]int) {
	t.Helper()
	seen := map[string]bool{}
	found := map[*group]int{}
	lastOf := map[*appender][2]int{}
	last := int64(-1)
	for n, r := range ps.recs {
		if r.Value == nil {
			t.Fatalf("%s: offset %d: null value never written", part, r.Offset)
		}
		w, ok := index[*r.Value]
		switch {
		case !ok:
			t.Fatalf("%s: offset %d: value %q was never written (corrupt or foreign)", part, r.Offset, *r.Value)
		case seen[*r.Value]:
			t.Fatalf("%s: offset %d: value %q served twice", part, r.Offset, *r.Value)
		case w.a.groups[w.g].state == dropped:
			t.Fatalf("%s: offset %d: %q was not acknowledged and absent before, now present", part, r.Offset, *r.Value)
		case r.Offset <= last || (rm == keepAll && r.Offset != int64(n)) || (rm == retained && r.Offset != ps.start+int64(n)):
			t.Fatalf("%s: record %d has offset %d after %d (contiguous expected: %v)", part, n, r.Offset, last, rm != compacted)
		}
		if prev, ok := lastOf[w.a]; ok && (w.g < prev[0] || w.g == prev[0] && w.i <= prev[1]) {
			t.Fatalf("%s: offset %d: %q comes after a later write of its appender", part, r.Offset, *r.Value)
		}
		lastOf[w.a] = [2]int{w.g, w.i}
		seen[*r.Value] = true
		found[w.a.groups[w.g]]++
		last = r.Offset
	}
	return seen, found
}

// resolveGroups checks acknowledged writes are there whole (torn writes and
// losses fail), settles pending writes as present or dropped, and returns
// how many records were appended in all. Under retention the groups of an
// appender before its first one served were removed whole (acknowledged:
// counted in gone) or may never have been written (pending: dropped), and
// the total counts only the groups from there on.
func resolveGroups(t testing.TB, part string, apps []*appender, found map[*group]int, rm removal) (total int64, gone int) {
	t.Helper()
	compacted := rm == compacted
	for _, a := range apps {
		first := 0
		if rm == retained {
			first = firstFound(a, found)
		}
		for gi, g := range a.groups {
			n := found[g]
			if gi < first {
				if g.state == present {
					gone += len(g.values)
				} else {
					g.state = dropped
				}
				continue
			}
			switch {
			case !compacted && n != 0 && n != len(g.values):
				t.Fatalf("%s: write of %d lines %v is torn: %d present", part, len(g.values), g.values, n)
			case !compacted && g.state == present && n == 0:
				t.Fatalf("%s: acknowledged write %v lost", part, g.values)
			case g.state == pending && n > 0:
				g.state = present
			case g.state == pending:
				g.state = dropped
			}
			if g.state == present {
				total += int64(len(g.values))
			}
		}
	}
	return total, gone
}

// firstFound is the index of a's first group with a record served; with
// none served, every group but those not yet checked was removed.
func firstFound(a *appender, found map[*group]int) int {
	for gi, g := range a.groups {
		if found[g] > 0 {
			return gi
		}
	}
	for gi, g := range a.groups {
		if g.state == pending {
			return gi
		}
	}
	return len(a.groups)
}

// checkLatestPerKey: the latest appended value of each key is served.
func checkLatestPerKey(t testing.TB, part string, apps []*appender, seen map[string]bool) {
	t.Helper()
	latest := map[string]string{}
	for _, a := range apps {
		for _, g := range a.groups {
			if g.state != present {
				continue
			}
			for i, k := range g.keys {
				latest[k] = g.values[i]
			}
		}
	}
	for k, v := range latest {
		if !seen[v] {
			t.Fatalf("%s: the latest value %q of key %s is gone", part, v, k)
		}
	}
}

// comparePlain: the plain view shows the same values as log.jsonl (their
// tail, when retention may have run between the two reads).
func comparePlain(d *daemon, part string, ps partState, retained bool) error {
	var want bytes.Buffer
	for _, r := range ps.recs {
		want.WriteString(*r.Value + "\n")
	}
	got, err := os.ReadFile(d.path(part, "log"))
	if err != nil {
		return err
	}
	// appends may not race this read: the writers are stopped
	if retained && bytes.HasSuffix(want.Bytes(), got) && (len(got) == want.Len() || want.Bytes()[want.Len()-len(got)-1] == '\n') {
		return nil
	}
	if !bytes.Equal(got, want.Bytes()) {
		return fmt.Errorf("%s: log (%d bytes) differs from the values of log.jsonl (%d bytes)", part, len(got), want.Len())
	}
	return nil
}

// runAppenders runs apps against the mount until stop closes or a write
// fails (the daemon died); it returns when all have finished.
func runAppenders(d *daemon, apps []*appender, iter int, stop <-chan struct{}) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(apps))
	for i, a := range apps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = a.run(d.path(a.part, a.file), iter, stop)
		}()
	}
	wg.Wait()
	return errs
}

// deadMountErr reports the errors a writer gets when the daemon is killed.
func deadMountErr(err error) bool {
	for _, e := range []error{syscall.ENOTCONN, syscall.ECONNABORTED, syscall.EIO, syscall.ENOENT} {
		if errorsIs(err, e) {
			return true
		}
	}
	return false
}
