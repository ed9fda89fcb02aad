package systest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// model is what was written: topic/partition -> value by offset.
type model map[string][]string

func tpKey(topic string, n int) string { return fmt.Sprintf("%s-%d", topic, n) }

// openStore opens dir with no background goroutines.
func openStore(t testing.TB, dir string, lg *logrus.Entry) (*logstore.Store, error) {
	t.Helper()
	return logstore.Open(dir, logstore.Options{Logger: lg, NoBackground: true})
}

// value is the payload of record off of a topic: unique, fixed length,
// compressible.
func value(topic string, off int64) string {
	s := fmt.Sprintf("%s-%06d:", topic, off)
	return s + strings.Repeat("x", 100-len(s))
}

// buildDataDir writes topics into a fresh data directory with logstore and
// closes it cleanly. Topic "t": one 100-byte record per batch, segments of
// about 11 batches. Topic "z": gzip, 5 records per batch.
func buildDataDir(t testing.TB, dir string) model {
	t.Helper()
	st, err := openStore(t, dir, testutil.NewLogger().Entry)
	if err != nil {
		t.Fatal(err)
	}
	m := model{}
	small := []partlog.KV{{Key: "segment.bytes", Value: "2000"}, {Key: "index.interval.bytes", Value: "250"}}
	for _, tc := range []struct {
		topic   string
		codec   string
		batches int
		per     int
	}{{"t", "none", 40, 1}, {"z", "gzip", 40, 5}} {
		if err := st.CreateTopic(tc.topic); err != nil {
			t.Fatal(err)
		}
		kv := append([]partlog.KV{{Key: "compression.type", Value: tc.codec}}, small...)
		if err := st.SetTopicConfig(tc.topic, kv); err != nil {
			t.Fatal(err)
		}
		l, err := st.Partition(tc.topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		for b := 0; b < tc.batches; b++ {
			recs := make([]record.Record, tc.per)
			for i := range recs {
				v := value(tc.topic, int64(len(vals)))
				vals = append(vals, v)
				recs[i] = record.Record{Value: []byte(v)}
			}
			if _, err := l.Append(recs); err != nil {
				t.Fatal(err)
			}
		}
		m[tpKey(tc.topic, 0)] = vals
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

// served is what a store serves of one partition.
type served struct {
	start, end int64
	offsets    []int64
	err        error // the first read error (corruption wraps ErrCorrupt)
}

// readPartition reads every record of every segment of topic-n, checking
// each served record against the model: a served byte must be a written
// byte. Reading continues in the next segment after an error, so damage in
// one segment does not hide the rest.
func readPartition(t testing.TB, st partlog.Store, topic string, n int, want []string) served {
	t.Helper()
	l, err := st.Partition(topic, n)
	if err != nil {
		return served{err: err}
	}
	out := served{start: l.StartOffset(), end: l.EndOffset()}
	segs, release := l.Segments()
	defer release()
	last := int64(-1)
	for _, seg := range segs {
		err := l.Read(seg, seg.Base, func(r *record.Record) bool {
			if r.Offset <= last {
				t.Errorf("%s-%d: offset %d after %d", topic, n, r.Offset, last)
			}
			last = r.Offset
			switch {
			case r.Offset < 0 || r.Offset >= int64(len(want)):
				t.Errorf("%s-%d: served offset %d, only %d written", topic, n, r.Offset, len(want))
			case string(r.Value) != want[r.Offset]:
				t.Errorf("%s-%d: offset %d served %q, wrote %q", topic, n, r.Offset, r.Value, want[r.Offset])
			}
			out.offsets = append(out.offsets, r.Offset)
			return true
		})
		if err != nil && out.err == nil {
			out.err = err
		}
	}
	return out
}

// batchPos is one batch of a segment file.
type batchPos struct {
	pos, size  int64
	base, last int64
	codec      record.Codec
}

// batchesOf lists the batches of a segment file.
func batchesOf(t testing.TB, path string) []batchPos {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := record.NewBytesScanner(data, path)
	var out []batchPos
	for sc.Next() {
		b := sc.Batch()
		out = append(out, batchPos{pos: b.Pos, size: b.Header.Size(), base: b.Header.BaseOffset,
			last: b.Header.LastOffset(), codec: b.Header.Codec()})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// segmentFiles lists the .log files of a partition directory, oldest first.
func segmentFiles(t testing.TB, pdir string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(pdir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(logs)
	return logs
}

// editFile applies fn to a file's bytes and writes the result back.
func editFile(t testing.TB, path string, fn func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tempLeftovers lists files that must not survive a mount or a recovery:
// checkpoint temp files and the cleaner's .cleaned/.swap files.
func tempLeftovers(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		n := fi.Name()
		if strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".cleaned") || strings.HasSuffix(n, ".swap") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
