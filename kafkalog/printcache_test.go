package kafkalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// printedTopic makes topic t with n records of 100 bytes in a cache
// directory of its own, reads them all (which prints every tile) and
// closes the store: the prints are saved. It returns the stamps the
// tiles had.
func printedTopic(t *testing.T, c *kfake.Cluster, cache string, n int) []uint64 {
	t.Helper()
	s := open(t, c, func(o *Options) { o.CacheDir = cache })
	if err := s.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, _ := s.Partition("t", 0)
	recs := make([]record.Record, 500)
	for i := 0; i < n; i += len(recs) {
		for j := range recs {
			recs[j].Value = []byte(fmt.Sprintf("%06d %093d", i+j, 0))
		}
		if _, err := l.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	l.(*Log).stale()
	if got := len(readAll(t, l)); got != n {
		t.Fatalf("%d records, want %d", got, n)
	}
	var stamps []uint64
	for _, sg := range segmentsOf(l) {
		if sg.Stamp == 0 {
			t.Fatalf("tile %d has no stamp after a read from its first offset", sg.Base)
		}
		stamps = append(stamps, sg.Stamp)
	}
	s.Close()
	return stamps
}

// stampsAfterRemount opens the store again on cache and returns the
// tiles' stamps, the fetches that took, and the log.
func stampsAfterRemount(t *testing.T, c *kfake.Cluster, cache string) ([]uint64, int64, testutil.Logger) {
	t.Helper()
	fetches := testutil.CountRequests(c, kmsg.Fetch)
	defer c.DropControl()
	lg := testutil.NewLogger()
	s := open(t, c, func(o *Options) { o.CacheDir, o.Logger = cache, lg.Entry })
	l, err := s.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	var stamps []uint64
	for _, sg := range segmentsOf(l) {
		stamps = append(stamps, sg.Stamp)
	}
	return stamps, fetches.Load(), lg
}

// rewritePrints changes the prints file of t-0 in cache with fn, framed
// for the topic ID id.
func rewritePrints(t *testing.T, cache string, id [16]byte, fn func(epoch *int32, end *int64, ws []tilePrint) []tilePrint) {
	t.Helper()
	path := filepath.Join(cache, "t-0."+printsName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := unframeCache(id, 0, b)
	if err != nil {
		t.Fatal(err)
	}
	epoch, end, ws, err := decodePrints(data)
	if err != nil {
		t.Fatal(err)
	}
	ws = fn(&epoch, &end, ws)
	if err := os.WriteFile(path, frameCache(id, 0, encodePrints(epoch, end, ws)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTilePrintsPersist: the tiles' prints survive a remount: the
// tiles keep their stamps and nothing is fetched to know them. A prints
// file that is cut short, garbage, a symbolic link, another topic's or
// partition's, of an epoch the cluster does not know, or that saw more
// than the log holds now is discarded with a log line (every stamp 0); DeleteRecords into
// tile 1 drops the prints of tiles 0 and 1 only.
func TestTilePrintsPersist(t *testing.T) {
	c := cluster(t)
	cache := t.TempDir()
	want := printedTopic(t, c, cache, 10000)
	if len(want) != 3 {
		t.Fatalf("%d tiles, want 3", len(want))
	}
	got, fetches, _ := stampsAfterRemount(t, c, cache)
	if fmt.Sprint(got) != fmt.Sprint(want) || fetches != 0 {
		t.Fatalf("after a remount: stamps %v (want %v), %d fetches (want 0)", got, want, fetches)
	}
	path := filepath.Join(cache, "t-0."+printsName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, c)
	id := s.cached("t").id
	other := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(other, good, 0o600); err != nil {
		t.Fatal(err)
	}
	damage := []struct {
		what string
		mk   func() error
	}{
		{"cut short", func() error { return os.WriteFile(path, good[:len(good)-7], 0o600) }},
		{"garbage", func() error { return os.WriteFile(path, []byte(strings.Repeat("\x93garbage", 40)), 0o600) }},
		{"a symlink", func() error { _ = os.Remove(path); return os.Symlink(other, path) }},
		{"another topic's", func() error { return os.WriteFile(path, frameCache([16]byte{1, 2, 3}, 0, good[cacheHeader:]), 0o600) }},
		{"another partition's", func() error { return os.WriteFile(path, frameCache(id, 1, good[cacheHeader:]), 0o600) }},
		{"of an unknown epoch", func() error {
			rewritePrints(t, cache, id, func(epoch *int32, _ *int64, ws []tilePrint) []tilePrint { *epoch += 5; return ws })
			return nil
		}},
		{"ahead of the log", func() error {
			rewritePrints(t, cache, id, func(_ *int32, end *int64, ws []tilePrint) []tilePrint { *end += 100; return ws })
			return nil
		}},
	}
	for _, d := range damage {
		_ = os.Remove(path)
		if err := os.WriteFile(path, good, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := d.mk(); err != nil {
			t.Fatal(err)
		}
		got, _, lg := stampsAfterRemount(t, c, cache)
		if fmt.Sprint(got) != "[0 0 0]" {
			t.Errorf("prints file %s: stamps %v, want none", d.what, got)
		}
		if !strings.Contains(lg.Buf.String(), "tile prints discarded") {
			t.Errorf("prints file %s: no log line", d.what)
		}
	}
	if b, _ := os.ReadFile(other); string(b) != string(good) {
		t.Fatal("the file a link pointed to changed")
	}

	_ = os.Remove(path)
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	deleteTo(t, c, 5000)
	got, _, _ = stampsAfterRemount(t, c, cache)
	if len(got) != 2 || got[0] != 0 || got[1] != want[2] {
		t.Fatalf("after DeleteRecords into tile 1: stamps %v, want [0 %d]", got, want[2])
	}
}

// TestTilePrintsTopicRecreated: prints of a topic deleted and created
// again (a new topic ID) are not used for the new one.
func TestTilePrintsTopicRecreated(t *testing.T) {
	c := cluster(t)
	cache := t.TempDir()
	printedTopic(t, c, cache, 5000)
	s := open(t, c)
	if _, err := s.adm.DeleteTopics(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	var l partlog.Log
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := s.CreateTopic("t")
		if err == nil {
			l, err = s.Partition("t", 0)
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	if _, err := l.Append(make([]record.Record, 6000)); err != nil {
		t.Fatal(err)
	}
	got, _, lg := stampsAfterRemount(t, c, cache)
	if fmt.Sprint(got) != "[0 0]" || !strings.Contains(lg.Buf.String(), "tile prints discarded") {
		t.Fatalf("recreated topic: stamps %v; log %s", got, lg.Buf.String())
	}
}

// TestTilePrintsCheckedAfterRemount: a tile compacted while nothing
// was mounted keeps its stamp until the first read from its first offset,
// which finds it rewritten: a new ID and stamp, Changed closed.
func TestTilePrintsCheckedAfterRemount(t *testing.T) {
	c := cluster(t)
	cache := t.TempDir()
	s := open(t, c, func(o *Options) { o.CacheDir = cache })
	l := compactedTopic(t, s, "t")
	readAll(t, l)
	before := segmentsOf(l)[0]
	s.Close()
	c.Compact()

	s = open(t, c, func(o *Options) { o.CacheDir = cache })
	l, _ = s.Partition("t", 0)
	if sg := segmentsOf(l)[0]; sg.Stamp != before.Stamp || sg.Stamp == 0 {
		t.Fatalf("stamp %d after the remount, %d before", sg.Stamp, before.Stamp)
	}
	ch := l.Changed()
	if got := readAll(t, l); len(got) >= 21 {
		t.Fatalf("compaction left %d records", len(got))
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("Changed not closed after the tile was seen compacted")
	}
	if sg := segmentsOf(l)[0]; sg.Stamp == before.Stamp || sg.ID == before.ID {
		t.Fatalf("tile kept stamp %d / ID %d after compaction was seen", sg.Stamp, sg.ID)
	}
}

// deleteTo deletes the records of t-0 below offset.
func deleteTo(t *testing.T, c *kfake.Cluster, offset int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := make(kadm.Offsets)
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: offset})
	resp, err := kadm.NewClient(cl).DeleteRecords(context.Background(), os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords: %v", err)
	}
}
