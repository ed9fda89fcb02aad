package logstore

import (
	"fmt"
	"io"
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

// openAt opens a store at dir with topic "t" created if new, and returns
// it with partition 0.
func openAt(t testing.TB, dir string, opt Options) (*Store, *Log) {
	t.Helper()
	st, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
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
