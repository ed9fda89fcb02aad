package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// The partition log on a BudgetFS with a budget of 16 descriptors for 50
// partitions (150+ segment files): appends, reads, rolls, retention with
// readers holding deleted segments, the cleaner's swap, a clean close and
// a reopen all work, and the process never holds more than the budget
// (plus pinned files of deleted segments still held by readers).

const (
	budget  = 16
	nTopics = 50
	rounds  = 20
)

type storeEnv struct {
	t   *testing.T
	dir string
	fds *vfs.BudgetFS
	st  *logstore.Store
	now time.Time
}

func openEnv(t *testing.T, dir string) *storeEnv {
	t.Helper()
	e := &storeEnv{t: t, dir: dir, fds: vfs.NewBudgetFS(vfs.Default, budget).(*vfs.BudgetFS), now: time.UnixMilli(1_764_410_400_000)}
	st, err := logstore.Open(dir, logstore.Options{FS: e.fds, Now: func() time.Time { return e.now }, NoBackground: true,
		Jitter:   func(int64) int64 { return 0 },
		Defaults: map[string]string{"segment.bytes": "1500", "retention.bytes": "2000", "file.delete.delay.ms": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	return e
}

func topic(i int) string { return fmt.Sprintf("topic-%02d", i) }

func (e *storeEnv) log(i int) *logstore.Log {
	e.t.Helper()
	l, err := e.st.Log(topic(i), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// value is the value of the record at offset off of topic i: rounds of 8.
func value(i int, off int64) string { return fmt.Sprintf("%s/%d", topic(i), off) }

func (e *storeEnv) appendRound(i int) {
	e.t.Helper()
	l := e.log(i)
	end := l.EndOffset()
	recs := make([]record.Record, 8)
	for j := range recs {
		recs[j] = record.Record{Key: []byte(fmt.Sprintf("k%d", j%4)), Value: []byte(value(i, end+int64(j)))}
	}
	if first, err := l.Append(recs); err != nil || first != end {
		e.t.Fatalf("append to %s at %d: first %d, %v", topic(i), end, first, err)
	}
}

// checkLog reads the whole log and checks every record's value by offset.
func (e *storeEnv) checkLog(l partlog.Log, i int, wantEnd int64) {
	e.t.Helper()
	segs, release := l.Segments()
	defer release()
	next := l.StartOffset()
	for _, s := range segs {
		err := l.Read(s, max(s.Base, next), func(r *record.Record) bool {
			if r.Offset < next || string(r.Value) != value(i, r.Offset) {
				e.t.Errorf("%s offset %d (want >= %d) holds %q", topic(i), r.Offset, next, r.Value)
			}
			next = r.Offset + 1
			return true
		})
		if err != nil {
			e.t.Fatalf("read %s segment %d: %v", topic(i), s.Base, err)
		}
	}
	if next != wantEnd {
		e.t.Fatalf("%s read up to %d, want %d", topic(i), next, wantEnd)
	}
}

func (e *storeEnv) checkFDs(base int) {
	e.t.Helper()
	s := e.fds.Stats()
	if s.Open > budget+s.Pinned {
		e.t.Fatalf("BudgetFS holds %d descriptors, budget %d + %d pinned", s.Open, budget, s.Pinned)
	}
	if n := fdCount(e.t) - base; n > budget+s.Pinned+4 {
		e.t.Fatalf("process holds %d more descriptors than before (budget %d, %d pinned, lock file and a few spare)", n, budget, s.Pinned)
	}
}

func fdCount(t *testing.T) int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(des)
}

func TestLogstoreOnTinyBudget(t *testing.T) {
	dir := t.TempDir()
	base := fdCount(t)
	e := openEnv(t, dir)
	for i := 0; i < nTopics; i++ {
		if err := e.st.CreateTopic(topic(i)); err != nil {
			t.Fatal(err)
		}
	}
	// readers hold the first segments of a few logs across retention
	held := map[int]func(){}
	var heldSegs = map[int][]partlog.Segment{}
	for r := 0; r < rounds; r++ {
		for i := 0; i < nTopics; i++ {
			e.appendRound(i)
		}
		if r == 3 {
			for i := 0; i < nTopics; i += 10 {
				heldSegs[i], held[i] = e.log(i).Segments()
			}
		}
		e.checkFDs(base)
	}
	deleted := 0
	for i := 0; i < nTopics; i++ {
		n, err := e.log(i).ApplyRetention()
		if err != nil {
			t.Fatal(err)
		}
		deleted += n
	}
	if err := e.st.RunMaintenance(false, true); err != nil { // removes .deleted files
		t.Fatal(err)
	}
	if deleted < nTopics {
		t.Fatalf("retention deleted only %d segments", deleted)
	}
	e.checkFDs(base)
	if s := e.fds.Stats(); s.Pinned == 0 {
		t.Fatalf("no removed segment file is pinned for the held snapshots: %+v", s)
	}
	e.readHeld(heldSegs)
	for _, release := range held {
		release()
	}
	e.cleanOne()
	for i := 0; i < nTopics; i++ {
		e.checkLog(e.log(i), i, rounds*8)
	}
	e.checkFDs(base)
	t.Logf("descriptors after %d rounds over %d partitions: %+v; %d segments deleted", rounds, nTopics, e.fds.Stats(), deleted)
	if s := e.fds.Stats(); s.Evictions == 0 || s.Reopens == 0 {
		t.Fatalf("the budget never bit: %+v", s)
	}
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
	if s := e.fds.Stats(); s.Open != 0 || s.Files != 0 {
		t.Errorf("after Close the BudgetFS still tracks files: %+v", s)
	}
	e = openEnv(t, dir)
	for i := 0; i < nTopics; i++ {
		e.appendRound(i)
		e.checkLog(e.log(i), i, (rounds+1)*8)
	}
	e.checkFDs(base)
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
}

// readHeld reads the held snapshots: their first segments were renamed
// to .deleted and removed since, and still read in full.
func (e *storeEnv) readHeld(heldSegs map[int][]partlog.Segment) {
	e.t.Helper()
	for i, segs := range heldSegs {
		if _, err := os.Stat(fmt.Sprintf("%s/%s-0/%020d.log", e.dir, topic(i), segs[0].Base)); !os.IsNotExist(err) {
			e.t.Fatalf("%s: the held first segment was not deleted (%v)", topic(i), err)
		}
		n := int64(0)
		err := e.log(i).Read(segs[0], segs[0].Base, func(r *record.Record) bool {
			if string(r.Value) != value(i, r.Offset) {
				e.t.Errorf("held deleted segment of %s: offset %d holds %q", topic(i), r.Offset, r.Value)
			}
			n++
			return true
		})
		if err != nil || n != segs[0].Next-segs[0].Base {
			e.t.Fatalf("held deleted segment of %s: %d records, %v", topic(i), n, err)
		}
	}
}

// cleanOne compacts topic 1: the cleaner writes .cleaned files and swaps
// them in over segment files that are closed by the BudgetFS.
func (e *storeEnv) cleanOne() {
	e.t.Helper()
	if err := e.st.SetTopicConfig(topic(1), []partlog.KV{{Key: "cleanup.policy", Value: "compact,delete"}}); err != nil {
		e.t.Fatal(err)
	}
	before := e.log(1).Stats().Records
	sum, err := compact.NewCleaner(compact.Options{}).CleanAll(compact.Targets(e.st, topic(1)), true)
	if err != nil {
		e.t.Fatal(err)
	}
	if sum.RecordsRemoved == 0 {
		e.t.Fatalf("cleaner removed nothing: %+v", sum)
	}
	// compaction keeps offsets: values still match their offsets
	segs, release := e.log(1).Segments()
	defer release()
	n := int64(0)
	for _, s := range segs {
		if err := e.log(1).Read(s, s.Base, func(r *record.Record) bool {
			if string(r.Value) != value(1, r.Offset) {
				e.t.Errorf("compacted %s offset %d holds %q", topic(1), r.Offset, r.Value)
			}
			n++
			return true
		}); err != nil {
			e.t.Fatal(err)
		}
	}
	if n >= before {
		e.t.Fatalf("compacted log has %d records, had %d", n, before)
	}
	if err := e.st.SetTopicConfig(topic(1), []partlog.KV{{Key: "cleanup.policy", Value: "delete"}}); err != nil {
		e.t.Fatal(err)
	}
}

// TestLogstoreConcurrentOnTinyBudget: appenders and readers of different
// partitions and a retention loop run at once with 16 descriptors for 20
// partitions (run with -race); every record reads back by offset.
func TestLogstoreConcurrentOnTinyBudget(t *testing.T) {
	e := openEnv(t, t.TempDir())
	const parts, workers, rounds = 20, 4, 30
	for i := 0; i < parts; i++ {
		if err := e.st.CreateTopic(topic(i)); err != nil {
			t.Fatal(err)
		}
	}
	logs := make([]*logstore.Log, parts)
	for i := range logs {
		logs[i] = e.log(i)
	}
	done := make(chan struct{})
	retained := make(chan error, 1)
	go func() {
		var err error
		for err == nil {
			select {
			case <-done:
				retained <- nil
				return
			default:
			}
			for _, l := range logs {
				if _, rerr := l.ApplyRetention(); rerr != nil {
					err = rerr
				}
			}
			if merr := e.st.RunMaintenance(false, false); merr != nil {
				err = merr
			}
		}
		retained <- err
	}()
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) { errs <- appendAndRead(logs, w, workers, rounds) }(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	close(done)
	if err := <-retained; err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		if _, err := l.ApplyRetention(); err != nil {
			t.Fatal(err)
		}
		e.checkLog(l, i, rounds*8)
		if l.StartOffset() == 0 {
			t.Errorf("%s: retention deleted nothing", topic(i))
		}
	}
	t.Logf("descriptors: %+v", e.fds.Stats())
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
}

// appendAndRead appends rounds of 8 records to the partitions w, w+step,
// ... and after each round reads each of them back.
func appendAndRead(logs []*logstore.Log, w, step, rounds int) error {
	for r := 0; r < rounds; r++ {
		for i := w; i < len(logs); i += step {
			l := logs[i]
			end := l.EndOffset()
			recs := make([]record.Record, 8)
			for j := range recs {
				recs[j] = record.Record{Value: []byte(value(i, end+int64(j)))}
			}
			if _, err := l.Append(recs); err != nil {
				return fmt.Errorf("append %s: %w", topic(i), err)
			}
			if err := readBack(l, i); err != nil {
				return err
			}
		}
	}
	return nil
}

func readBack(l *logstore.Log, i int) error {
	segs, release := l.Segments()
	defer release()
	for _, s := range segs {
		var bad error
		err := l.Read(s, s.Base, func(r *record.Record) bool {
			if string(r.Value) != value(i, r.Offset) {
				bad = fmt.Errorf("%s offset %d holds %q", topic(i), r.Offset, r.Value)
				return false
			}
			return true
		})
		if err != nil {
			return fmt.Errorf("read %s segment %d: %w", topic(i), s.Base, err)
		}
		if bad != nil {
			return bad
		}
	}
	return nil
}
