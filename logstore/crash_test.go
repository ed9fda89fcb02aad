package logstore

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

var crashCfg = map[string]string{"segment.bytes": "3000", "index.interval.bytes": "200", "segment.index.bytes": "4096"}

// crashWorkload appends, syncs and checkpoints at random on fs until the
// injector's crash fires (or ops run out). It returns the log end offset
// of the last Sync that completed before the crash.
func crashWorkload(t *testing.T, fs vfs.FS, c *clock, rng *rand.Rand, crashed func() bool) int64 {
	st, err := Open("/data", testOptions(fs, c, crashCfg))
	if err != nil {
		if crashed() {
			return 0
		}
		t.Fatalf("open: %v", err)
	}
	defer st.Close()
	if err := st.CreateTopic("t"); err != nil {
		return 0
	}
	l, _ := st.Log("t", 0)
	synced := int64(0)
	for op := 0; op < 60 && !crashed(); op++ {
		switch r := rng.Intn(10); {
		case r < 7:
			end := l.EndOffset()
			rs := make([]record.Record, 1+rng.Intn(20))
			for i := range rs {
				rs[i].Value = []byte(fmt.Sprintf("o-%d-%s", end+int64(i), make([]byte, rng.Intn(50))))
			}
			if _, err := l.Append(rs); err != nil && !crashed() {
				t.Fatalf("append: %v", err)
			}
		case r < 9:
			end := l.EndOffset()
			if err := l.Sync(); err == nil && !crashed() {
				synced = end
			}
		default:
			st.RunMaintenance(false, true)
		}
	}
	return synced
}

func TestCrashAtRandomPoints(t *testing.T) {
	iterations := 250
	if testing.Short() {
		iterations = 50
	}
	for it := 0; it < iterations; it++ {
		rng := rand.New(rand.NewSource(int64(it)))
		mem := vfs.NewCrashFS()
		c := newClock()
		crashAt := 1 + rng.Intn(400)
		var after *vfs.CrashFS
		count := 0
		fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, name string) (bool, error) {
			count++
			if count == crashAt && after == nil {
				if rng.Intn(2) == 0 {
					after = mem.CrashTorn(rng)
				} else {
					after = mem.Crash()
				}
			}
			return false, nil
		}))
		synced := crashWorkload(t, fs, c, rng, func() bool { return after != nil })
		if after == nil {
			after = mem.Crash()
		}
		checkAfterCrash(t, it, after, c, synced)
	}
}

// checkAfterCrash opens the crashed state: every synced record is there and
// every record served is the one written at its offset.
func checkAfterCrash(t *testing.T, it int, fs *vfs.CrashFS, c *clock, synced int64) {
	st, err := Open("/data", testOptions(fs, c, crashCfg))
	if err != nil {
		if synced == 0 {
			return // crashed before the data directory existed durably
		}
		t.Fatalf("iteration %d: open after crash: %v", it, err)
	}
	defer st.Close()
	l, err := st.Log("t", 0)
	if err != nil {
		if synced > 0 {
			t.Fatalf("iteration %d: partition lost with %d synced records: %v", it, synced, err)
		}
		return
	}
	end := l.EndOffset()
	if end < synced {
		t.Fatalf("iteration %d: end offset %d below synced %d", it, end, synced)
	}
	all := readLog(t, l, 0)
	if int64(len(all)) != end {
		t.Fatalf("iteration %d: %d records readable, end %d", it, len(all), end)
	}
	for i, r := range all {
		if r.off != int64(i) || r.value[:len(fmt.Sprintf("o-%d-", i))] != fmt.Sprintf("o-%d-", i) {
			t.Fatalf("iteration %d: record %d is %+v", it, i, r)
		}
	}
	if first, err := l.Append(recs(1, "x", 0)); err != nil || first != end {
		t.Fatalf("iteration %d: append after crash: %d %v", it, first, err)
	}
}
