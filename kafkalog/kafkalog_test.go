package kafkalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/partlogtest"
	"github.com/partfs/partfs/record"
)

// cluster starts an in-process cluster on loopback ports.
func cluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster { return testutil.Kafka(t, opts...) }

// open opens a Store on c with a short timeout.
func open(t *testing.T, c *kfake.Cluster, mod ...func(*Options)) *Store {
	t.Helper()
	opt := Options{Brokers: c.ListenAddrs(), Timeout: 5 * time.Second, CacheDir: t.TempDir(), Logger: testutil.NewLogger().Entry}
	for _, m := range mod {
		m(&opt)
	}
	s, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// readAll returns every record of l as the filesystem reads it.
func readAll(t *testing.T, l partlog.Log) []record.Record {
	t.Helper()
	segs, release := l.Segments()
	defer release()
	var out []record.Record
	for _, sg := range segs {
		err := l.Read(sg, sg.Base, func(r *record.Record) bool {
			c := record.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)}
			for _, h := range r.Headers {
				c.Headers = append(c.Headers, record.Header{Key: h.Key, Value: bytes.Clone(h.Value)})
			}
			out = append(out, c)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestAppendRead(t *testing.T) {
	c := cluster(t)
	s := open(t, c)
	if err := s.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic("t"); !errors.Is(err, partlog.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	l, err := s.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := []record.Record{
		{Key: []byte("k1"), Value: []byte("v1"), Timestamp: 1000, Headers: []record.Header{{Key: "h", Value: []byte("x")}}},
		{Value: []byte("v2"), Timestamp: 2000},
		{Key: []byte("k1"), Timestamp: 3000},
	}
	first, err := l.Append(recs)
	if err != nil || first != 0 {
		t.Fatalf("append: %d %v", first, err)
	}
	first, err = l.Append(recs[:1])
	if err != nil || first != 3 {
		t.Fatalf("second append: %d %v", first, err)
	}
	if l.StartOffset() != 0 || l.EndOffset() != 4 {
		t.Fatalf("offsets %d..%d", l.StartOffset(), l.EndOffset())
	}
	got := readAll(t, l)
	if len(got) != 4 {
		t.Fatalf("read %d records: %+v", len(got), got)
	}
	for i, r := range got {
		want := recs[i%3]
		if r.Offset != int64(i) || !bytes.Equal(r.Key, want.Key) || !bytes.Equal(r.Value, want.Value) || r.Timestamp != want.Timestamp ||
			(want.Value == nil) != (r.Value == nil) || fmt.Sprint(r.Headers) != fmt.Sprint(want.Headers) {
			t.Errorf("record %d: %+v, want %+v", i, r, want)
		}
	}
	for ts, want := range map[int64]int64{1500: 1, 2000: 1, 99999: 4, partlog.Earliest: 0, partlog.Latest: 4, partlog.MaxTimestamp: 2} {
		if off, err := l.OffsetForTime(ts); err != nil || off != want {
			t.Errorf("OffsetForTime(%d) = %d, %v; want %d", ts, off, err, want)
		}
	}
}

// TestConformance runs partlogtest on the backend over kfake. Not run:
// LineAppender and SegmentFiler (the backend has neither) and Retention
// (the suite's partitions fit one tile of offsets). Rewrite compacts
// the cluster and then reads each tile from its start, as fs does when
// it renders one: that fetch is where the backend sees the tile changed.
func TestConformance(t *testing.T) {
	clusters := map[partlog.Store]*kfake.Cluster{}
	caches := map[partlog.Store]string{}
	openOn := func(t *testing.T, c *kfake.Cluster, cache string, ro bool) partlog.Store {
		s := open(t, c, func(o *Options) { o.CacheDir, o.ReadOnly = cache, ro })
		clusters[s], caches[s] = c, cache
		return s
	}
	partlogtest.Run(t, partlogtest.Backend{
		New: func(t *testing.T) partlog.Store { return openOn(t, cluster(t), t.TempDir(), false) },
		Reopen: func(t *testing.T, st partlog.Store) partlog.Store {
			st.Close()
			return openOn(t, clusters[st], caches[st], false)
		},
		ReadOnly: func(t *testing.T) partlog.Store {
			c := cluster(t)
			w := open(t, c)
			if err := w.CreateTopic("ro"); err != nil {
				t.Fatal(err)
			}
			l, _ := w.Partition("ro", 0)
			if _, err := l.Append([]record.Record{{Value: []byte("x")}}); err != nil {
				t.Fatal(err)
			}
			return openOn(t, c, t.TempDir(), true)
		},
		Transactions: func(t *testing.T) partlog.Store {
			c := cluster(t)
			testutil.KafkaTxnLayout(t, c)
			return openOn(t, c, t.TempDir(), false)
		},
		Rewrite: func(t *testing.T, st partlog.Store, l partlog.Log) {
			clusters[st].Compact()
			readAll(t, l)
		},
	})
}

// TestLeaderMovesAndFaults: appends go on while the leader moves and
// produce requests fail, before the append (NOT_LEADER) and after it
// (REQUEST_TIMED_OUT: the same batch goes again and the broker drops it
// as a duplicate); every record is there once, in order.
func TestLeaderMovesAndFaults(t *testing.T) {
	c := cluster(t, kfake.NumBrokers(3))
	s := open(t, c)
	if err := s.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, _ := s.Partition("t", 0)
	const n = 60
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			if err := c.MoveTopicPartition("t", 0, int32(i/3%3)); err != nil {
				t.Fatal(err)
			}
		case 1:
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.NotLeaderForPartition})
		case 2:
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.RequestTimedOut})
		}
		first, err := l.Append([]record.Record{{Value: []byte(fmt.Sprint(i))}, {Value: []byte(fmt.Sprint(i, "b"))}})
		if err != nil || first != int64(2*i) {
			t.Fatalf("append %d: first %d, %v", i, first, err)
		}
	}
	got := readAll(t, l)
	if len(got) != 2*n {
		t.Fatalf("%d records, want %d", len(got), 2*n)
	}
	for i, r := range got {
		want := fmt.Sprint(i / 2)
		if i%2 == 1 {
			want += "b"
		}
		if r.Offset != int64(i) || string(r.Value) != want {
			t.Fatalf("record %d: offset %d value %q, want %q", i, r.Offset, r.Value, want)
		}
	}
}

// batches returns the number of record batches the partition holds and
// their codecs, from a raw fetch.
func batches(t *testing.T, l *Log) (int, []record.Codec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, _, err := l.fetch(ctx, 0, fetchMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	sc := record.NewBytesScanner(p.RecordBatches, "fetch")
	n, codecs := 0, []record.Codec{}
	for sc.Next() {
		n++
		codecs = append(codecs, sc.Batch().Header.Codec())
	}
	return n, codecs
}

// TestAppendBatches: an append is one batch, in the topic's codec, where
// it fits max.message.bytes; a larger one is several batches, contiguous;
// a record too large alone is ErrTooLarge with nothing appended.
func TestAppendBatches(t *testing.T) {
	s := open(t, cluster(t))
	recs := make([]record.Record, 1000)
	for i := range recs {
		recs[i].Value = bytes.Repeat([]byte{byte('a' + i%26)}, 100)
	}
	for _, c := range []struct {
		topic, codec string
		maxMsg       string
		batches      int
	}{
		{"one", "producer", "", 1},
		{"gz", "gzip", "", 1},
		{"split", "producer", "50000", 3},
		{"zsplit", "zstd", "50000", 1}, // compresses into one batch within the limit
	} {
		if err := s.CreateTopic(c.topic); err != nil {
			t.Fatal(err)
		}
		kv := []partlog.KV{{Key: "compression.type", Value: c.codec}}
		if c.maxMsg != "" {
			kv = append(kv, partlog.KV{Key: "max.message.bytes", Value: c.maxMsg})
		}
		if err := s.SetTopicConfig(c.topic, kv); err != nil {
			t.Fatal(err)
		}
		pl, _ := s.Partition(c.topic, 0)
		l := pl.(*Log)
		if first, err := l.Append(recs); err != nil || first != 0 {
			t.Fatalf("%s: append: %d %v", c.topic, first, err)
		}
		n, codecs := batches(t, l)
		want, _ := config.Topic{Compression: c.codec}.Codec()
		if n < c.batches || (c.batches == 1 && n != 1) || codecs[0] != want {
			t.Errorf("%s: %d batches %v, want %d in %s", c.topic, n, codecs, c.batches, c.codec)
		}
		if got := readAll(t, l); len(got) != len(recs) || got[len(got)-1].Offset != int64(len(recs)-1) {
			t.Errorf("%s: %d records read back", c.topic, len(got))
		}
		t.Logf("%s: 1000 records of 100 bytes, max.message.bytes %q: %d batches", c.topic, c.maxMsg, n)
	}
	pl, _ := s.Partition("split", 0)
	_, err := pl.Append([]record.Record{{Value: []byte("ok")}, {Value: bytes.Repeat([]byte("x"), 60000)}})
	if !errors.Is(err, partlog.ErrTooLarge) || pl.EndOffset() != 1000 {
		t.Fatalf("a record over max.message.bytes: %v, end %d", err, pl.EndOffset())
	}
}

// TestLogAppendTime: under message.timestamp.type=LogAppendTime partfs
// sends its batches as CreateTime and leaves the stamping to the broker,
// as Kafka's producer does; a Kafka broker then stamps them and reads give
// the append time (record's decoder applies the attribute). kfake does not
// apply LogAppendTime (and breaks the CRC of a batch that asks for it),
// so here the records keep the time they were given.
func TestLogAppendTime(t *testing.T) {
	s := open(t, cluster(t))
	if err := s.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTopicConfig("t", []partlog.KV{{Key: "message.timestamp.type", Value: "LogAppendTime"}}); err != nil {
		t.Fatal(err)
	}
	pl, _ := s.Partition("t", 0)
	l := pl.(*Log)
	if _, err := l.Append([]record.Record{{Value: []byte("a"), Timestamp: 1000}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, _, err := l.fetch(ctx, 0, fetchMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.ParseHeader(p.RecordBatches)
	if err != nil || h.LogAppendTime() {
		t.Fatalf("the batch as stored: %+v %v, want CreateTime", h, err)
	}
	if got := readAll(t, l); len(got) != 1 || got[0].Timestamp != 1000 {
		t.Fatalf("read back %+v", got)
	}
}

// compactedTopic creates topic name with cleanup.policy=compact and
// appends 21 records, one a batch: key "first", then k1, k0, k1, ...
// (values v0..v20); it returns partition 0, its offsets to be asked again
// (stale).
func compactedTopic(t *testing.T, s *Store, name string) partlog.Log {
	t.Helper()
	if err := s.CreateTopic(name); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTopicConfig(name, []partlog.KV{{Key: "cleanup.policy", Value: "compact"}}); err != nil {
		t.Fatal(err)
	}
	l, _ := s.Partition(name, 0)
	for i := 0; i < 21; i++ {
		key := fmt.Sprint("k", i%2)
		if i == 0 {
			key = "first"
		}
		if _, err := l.Append([]record.Record{{Key: []byte(key), Value: []byte(fmt.Sprint("v", i))}}); err != nil {
			t.Fatal(err)
		}
	}
	l.(*Log).stale()
	return l
}

// TestCompactionInsideTile: compaction that keeps a tile's first
// record and log start offset but removes records after it gives the
// tile a new ID and closes Changed once a read from the tile's start
// fetches it again; a tile nobody changed keeps its ID across reads.
func TestCompactionInsideTile(t *testing.T) {
	c := cluster(t)
	s := open(t, c)
	l := compactedTopic(t, s, "c")
	segs := segmentsOf(l)
	if n := len(readAll(t, l)); n != 21 {
		t.Fatalf("%d records before compaction", n)
	}
	readAll(t, l)
	if again := segmentsOf(l); again[0].ID != segs[0].ID {
		t.Fatalf("tile ID changed with nothing changed: %d -> %d", segs[0].ID, again[0].ID)
	}
	ch := l.Changed()
	c.Compact()
	l.(*Log).stale()
	if start := l.StartOffset(); start != 0 {
		t.Fatalf("log start offset %d after compaction: the test needs the first record kept", start)
	}
	if now := segmentsOf(l); now[0].ID != segs[0].ID {
		t.Fatalf("tile ID changed before any fetch: the test does not reach the check")
	}
	got := readAll(t, l)
	if len(got) >= 21 || got[0].Offset != 0 {
		t.Fatalf("compaction left %d records from offset %d", len(got), got[0].Offset)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("Changed not closed after the tile was seen compacted")
	}
	if now := segmentsOf(l); now[0].ID == segs[0].ID {
		t.Fatalf("tile kept ID %d after compaction inside it", segs[0].ID)
	}
}

// topicT starts a cluster with topic t and returns its partition 0.
func topicT(t *testing.T) (*kfake.Cluster, partlog.Log) {
	t.Helper()
	c := cluster(t)
	s := open(t, c)
	if err := s.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, err := s.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

// segmentsOf returns a snapshot of l's tiles.
func segmentsOf(l partlog.Log) []partlog.Segment {
	segs, release := l.Segments()
	defer release()
	return segs
}

// TestCacheFiles: a sidecar comes back as saved; a cache file that is
// damaged, cut short, of another topic or partition, a symbolic link or
// a FIFO is discarded with a log line (ErrNotFound), and saving over a
// link replaces the link, not what it points to.
func TestCacheFiles(t *testing.T) {
	lg := testutil.NewLogger()
	cache := t.TempDir()
	s := open(t, cluster(t), func(o *Options) { o.CacheDir, o.Logger = cache, lg.Entry })
	for _, topic := range []string{"a", "b"} {
		if err := s.CreateTopic(topic); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := s.Partition("a", 0)
	b, _ := s.Partition("b", 0)
	data := []byte("positions\x00\x01\x02")
	if err := a.SaveSidecar("pos", data); err != nil {
		t.Fatal(err)
	}
	if got, err := a.LoadSidecar("pos"); err != nil || string(got) != string(data) {
		t.Fatalf("LoadSidecar = %q, %v; saved %q", got, err, data)
	}
	file := filepath.Join(cache, "a-0.pos")
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(other, good, 0o600); err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-1] ^= 1
	damage := map[string]func(string) error{
		"damaged":   func(p string) error { return os.WriteFile(p, flipped, 0o600) },
		"cut short": func(p string) error { return os.WriteFile(p, good[:len(good)-1], 0o600) },
		"empty":     func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"a symlink": func(p string) error { return os.Symlink(other, p) },
		"a FIFO":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
	}
	for what, mk := range damage {
		_ = os.Remove(file)
		if err := mk(file); err != nil {
			t.Fatal(err)
		}
		logged := strings.Count(lg.Buf.String(), "cache file discarded")
		done := make(chan struct{})
		var got []byte
		go func() {
			defer close(done)
			got, err = a.LoadSidecar("pos")
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: LoadSidecar blocks", what)
		}
		if !errors.Is(err, partlog.ErrNotFound) || got != nil {
			t.Errorf("%s cache file: LoadSidecar = %q, %v; want ErrNotFound", what, got, err)
		}
		if strings.Count(lg.Buf.String(), "cache file discarded") != logged+1 {
			t.Errorf("%s cache file: no log line", what)
		}
	}
	// a link is replaced by a save, and what it points to is left alone
	_ = os.Remove(file)
	if err := os.Symlink(other, file); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveSidecar("pos", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("after a save over a link: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(other); string(b) != string(good) {
		t.Fatal("a save through a link changed the file it points to")
	}
	// another topic's file under this partition's name
	if err := os.WriteFile(filepath.Join(cache, "b-0.pos"), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := b.LoadSidecar("pos"); !errors.Is(err, partlog.ErrNotFound) {
		t.Errorf("topic a's cache file read as topic b's: %q, %v", got, err)
	}
	// another partition's file under this partition's name
	if err := s.AddPartition("a", 1); err != nil {
		t.Fatal(err)
	}
	a1, err := s.Partition("a", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "a-1.pos"), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := a1.LoadSidecar("pos"); !errors.Is(err, partlog.ErrNotFound) {
		t.Errorf("partition 0's cache file read as partition 1's: %q, %v", got, err)
	}
}

// TestSequentialReadFetchesOnce: batches that span two tiles (5,000
// records, tiles of 4,096 offsets) are fetched once by a reader going
// through the tiles in order: a tile's Read starts with what the
// previous one fetched past its end. Every record comes once, in order.
func TestSequentialReadFetchesOnce(t *testing.T) {
	c, l := topicT(t)
	recs := make([]record.Record, 5000)
	for i := range recs {
		recs[i].Value = []byte(fmt.Sprintf("%06d %0110d", i, 0))
	}
	const appends = 40
	for i := 0; i < appends; i++ {
		if _, err := l.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	fetches := testutil.CountRequests(c, kmsg.Fetch)
	got := readAll(t, l)
	if len(got) != appends*len(recs) {
		t.Fatalf("%d records, want %d", len(got), appends*len(recs))
	}
	for i, r := range got {
		if r.Offset != int64(i) || !bytes.Equal(r.Value, recs[i%len(recs)].Value) {
			t.Fatalf("record %d: offset %d value %.10q", i, r.Offset, r.Value)
		}
	}
	tiles := int64(appends*len(recs)/TileOffsets + 1)
	if n := fetches.Load(); n > appends+2 {
		t.Fatalf("%d fetches for %d batches in %d tiles: batches fetched again", n, appends, tiles)
	}
	t.Logf("%d fetches for %d batches in %d tiles", fetches.Load(), appends, tiles)
}

// TestTLSAndSASL: over TLS (the CA from Options.CAFile), each SASL
// mechanism logs in, creates a topic, appends and reads back; a CA that
// did not sign the brokers' certificate and a wrong password fail Open.
func TestTLSAndSASL(t *testing.T) {
	tlsOpt, ca := testutil.KafkaTLS(t)
	c := cluster(t, tlsOpt, kfake.EnableSASL(), kfake.Superuser("PLAIN", "p", "pw-plain"),
		kfake.Superuser("SCRAM-SHA-256", "s256", "pw-256"), kfake.Superuser("SCRAM-SHA-512", "s512", "pw-512"))
	for _, m := range []struct{ mech, user, pass string }{
		{"plain", "p", "pw-plain"}, {"scram-sha-256", "s256", "pw-256"}, {"scram-sha-512", "s512", "pw-512"},
	} {
		s := open(t, c, func(o *Options) { o.CAFile, o.SASL, o.User, o.Password = ca, m.mech, m.user, m.pass })
		if err := s.CreateTopic(m.user); err != nil {
			t.Fatalf("%s: %v", m.mech, err)
		}
		l, _ := s.Partition(m.user, 0)
		if _, err := l.Append([]record.Record{{Value: []byte(m.mech)}}); err != nil {
			t.Fatalf("%s: append: %v", m.mech, err)
		}
		if got := readAll(t, l); len(got) != 1 || string(got[0].Value) != m.mech {
			t.Fatalf("%s: read back %+v", m.mech, got)
		}
		s.Close()
	}
	_, otherCA := testutil.KafkaTLS(t)
	for what, mod := range map[string]func(*Options){
		"another CA":     func(o *Options) { o.CAFile, o.SASL, o.User, o.Password = otherCA, "plain", "p", "pw-plain" },
		"wrong password": func(o *Options) { o.CAFile, o.SASL, o.User, o.Password = ca, "scram-sha-512", "s512", "nope" },
	} {
		opt := Options{Brokers: c.ListenAddrs(), Timeout: 2 * time.Second, CacheDir: t.TempDir(), Logger: testutil.NewLogger().Entry}
		mod(&opt)
		if s, err := Open(opt); err == nil {
			s.Close()
			t.Errorf("%s: Open succeeded", what)
		}
	}
}

// TestRestKeepsTransactions: one producer aborts a transaction and then
// commits one whose batch holds a tile's end (offset 4,096): the Read of
// the next tile starts with the batch the previous one fetched and not
// passed, and must not take the aborted transaction met before it as
// still open; read_committed, every committed record comes once.
func TestRestKeepsTransactions(t *testing.T) {
	c, l := topicT(t)
	plain := make([]record.Record, TileOffsets-6)
	for i := range plain {
		plain[i].Value = []byte(fmt.Sprint("p", i))
	}
	if _, err := l.Append(plain); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic("t"), kgo.TransactionalID("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for _, tx := range []struct {
		values []string
		end    kgo.TransactionEndTry
	}{{[]string{"a1", "a2", "a3"}, kgo.TryAbort}, {[]string{"c1", "c2", "c3", "c4", "c5", "c6"}, kgo.TryCommit}} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for _, v := range tx.values {
			recs = append(recs, &kgo.Record{Value: []byte(v)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, tx.end); err != nil {
			t.Fatal(err)
		}
	}
	l.(*Log).stale()
	var got []string
	for _, r := range readAll(t, l) {
		got = append(got, string(r.Value))
	}
	if n := len(got); n != len(plain)+6 || strings.Join(got[n-7:], " ") != fmt.Sprint("p", len(plain)-1, " c1 c2 c3 c4 c5 c6") {
		t.Fatalf("%d records, ending %q", n, got[max(n-8, 0):])
	}
}
