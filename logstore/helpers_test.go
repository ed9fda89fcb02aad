package logstore

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// clock is the tests' injected clock.
type clock = testutil.Clock

func newClock() *clock { return testutil.NewClock(time.UnixMilli(1_764_410_400_000)) }

func testOptions(fs vfs.FS, c *clock, cfg map[string]string) Options {
	return Options{FS: fs, Now: c.Now, Defaults: cfg, NoBackground: true, Jitter: func(int64) int64 { return 0 }}
}

// openTest opens a store on fs at /data with topic "t" created if new.
func openTest(t testing.TB, fs vfs.FS, c *clock, cfg map[string]string) (*Store, *Log) {
	t.Helper()
	return openAt(t, "/data", testOptions(fs, c, cfg))
}

// writePartition writes files (name: contents) into partition directory
// part of a data directory /data on a new crash filesystem.
func writePartition(part string, files map[string][]byte) (*vfs.CrashFS, *clock) {
	fs, c := vfs.NewCrashFS(), newClock()
	fs.MkdirAll("/data/"+part, 0o755)
	for name, b := range files {
		w, _ := fs.Create("/data/" + part + "/" + name)
		w.Write(b)
		w.Close()
	}
	return fs, c
}

// closedWith returns a crash filesystem whose /data holds topic "t" with
// rs appended to partition 0, closed cleanly, and its clock.
func closedWith(t testing.TB, rs []record.Record) (*vfs.CrashFS, *clock) {
	t.Helper()
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, nil)
	if _, err := l.Append(rs); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, c
}

// appendOutOfOrder appends n batches of 1 to 8 records whose CreateTimes
// wander up to 1.5 s either side of a time that starts at 1,000,000 ms and
// rises 200 ms a batch; with values, each record's value is 0 to 59 zero
// bytes drawn from rng after its time. It returns the time after the last
// batch.
func appendOutOfOrder(t testing.TB, l *Log, rng *rand.Rand, n int, values bool) int64 {
	t.Helper()
	ts := int64(1_000_000)
	for i := 0; i < n; i++ {
		rs := recs(1+rng.Intn(8), fmt.Sprint(i), 0)
		for j := range rs {
			rs[j].Timestamp = ts + int64(rng.Intn(3000)) - 1500
			if values {
				rs[j].Value = make([]byte, rng.Intn(60))
			}
		}
		ts += 200
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// openTopics opens a store at dir and creates the topics named.
func openTopics(t testing.TB, dir string, opt Options, topics ...string) *Store {
	t.Helper()
	st, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for _, name := range topics {
		if err := st.CreateTopic(name); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// openAt opens a store at dir with topic "t" created if new, and returns
// it with partition 0.
func openAt(t testing.TB, dir string, opt Options) (*Store, *Log) {
	t.Helper()
	st := openTopics(t, dir, opt)
	if _, err := st.Partitions("t"); err != nil {
		if err := st.CreateTopic("t"); err != nil {
			t.Fatalf("create topic: %v", err)
		}
	}
	l, err := st.Log("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	return st, l
}

func recs(n int, prefix string, ts int64) []record.Record {
	out := make([]record.Record, n)
	for i := range out {
		out[i] = record.Record{Timestamp: ts, Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
		if ts > 0 {
			out[i].Timestamp = ts + int64(i)
		}
	}
	return out
}

// readAllRecords reads every record of the log with its offset and value.
type rec struct {
	off   int64
	ts    int64
	value string
}

func readLog(t testing.TB, l partlog.Log, from int64) []rec {
	t.Helper()
	segs, release := l.Segments()
	defer release()
	var out []rec
	for _, s := range segs {
		if s.Next <= from {
			continue
		}
		err := l.Read(s, max(from, s.Base), func(r *record.Record) bool {
			out = append(out, rec{r.Offset, r.Timestamp, string(r.Value)})
			return true
		})
		if err != nil {
			t.Fatalf("read segment %d: %v", s.Base, err)
		}
	}
	return out
}

// readFileBytes reads the file at path on fs whole.
func readFileBytes(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fileSize(t testing.TB, fs vfs.FS, path string) int64 {
	t.Helper()
	fi, err := fs.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return fi.Size()
}

func exists(fs vfs.FS, path string) bool {
	_, err := fs.Stat(path)
	return err == nil || !os.IsNotExist(err)
}

var errEOF = io.EOF
