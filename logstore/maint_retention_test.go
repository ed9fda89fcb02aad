package logstore

import (
	"testing"
	"time"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

func TestRetentionBytesAndSnapshots(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := buildLogOpen(t, fs, c, map[string]string{"segment.bytes": "2000", "retention.bytes": "3000",
		"file.delete.delay.ms": "60000"}, 40)
	defer st.Close()
	segs, release := l.Segments() // a reader holding the old list
	changed := l.Changed()
	n, err := l.ApplyRetention()
	if err != nil || n != 2 {
		t.Fatalf("deleted %d segments (%v), want 2", n, err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("Changed did not fire on retention")
	}
	if l.StartOffset() != 22 || segmentBases(l)[0] != 22 {
		t.Fatalf("start offset %d", l.StartOffset())
	}
	if exists(fs, "/data/t-0/00000000000000000000.log") || !exists(fs, "/data/t-0/00000000000000000000.log.deleted") {
		t.Fatal("segment not renamed to .deleted")
	}
	// the held snapshot still reads the deleted segment
	got := 0
	if err := l.Read(segs[0], 0, func(*record.Record) bool { got++; return true }); err != nil || got != 11 {
		t.Fatalf("read of a held deleted segment: %d records, %v", got, err)
	}
	release()
	if err := l.Read(segs[0], 0, func(*record.Record) bool { return true }); err == nil {
		t.Fatal("read of a released deleted segment succeeded")
	}
	st.RunMaintenance(false, false)
	if !exists(fs, "/data/t-0/00000000000000000000.log.deleted") {
		t.Fatal(".deleted removed before file.delete.delay.ms")
	}
	c.Add(61 * time.Second)
	st.RunMaintenance(false, false)
	if exists(fs, "/data/t-0/00000000000000000000.log.deleted") {
		t.Fatal(".deleted not removed after file.delete.delay.ms")
	}
	// Kafka lists a partition in log-start-offset-checkpoint only when its
	// start is above its first segment's base
	m, err := checkpoint.ReadOffsets(fs, "/data/log-start-offset-checkpoint")
	if _, ok := m[checkpoint.TopicPartition{Topic: "t", Partition: 0}]; err != nil || ok {
		t.Fatalf("log-start-offset-checkpoint: %v %v", m, err)
	}
	if s := l.Stats(); s.Records != 18 || s.LogStartOffset != 22 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRetentionMs(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := buildLogOpen(t, fs, c, map[string]string{"segment.bytes": "2000", "retention.ms": "3600000"}, 40)
	defer st.Close()
	c.Add(59 * time.Minute)
	if n, _ := l.ApplyRetention(); n != 0 {
		t.Fatalf("deleted %d segments before retention.ms", n)
	}
	c.Add(2 * time.Minute)
	// every segment is old now: the active one too is rolled and deleted,
	// as Kafka does; the log end stays
	if n, err := l.ApplyRetention(); n != 4 || err != nil {
		t.Fatalf("deleted %d segments (%v), want all 4", n, err)
	}
	if l.StartOffset() != 40 || l.EndOffset() != 40 {
		t.Fatalf("start %d end %d, want 40 40", l.StartOffset(), l.EndOffset())
	}
	if n, _ := l.ApplyRetention(); n != 0 {
		t.Fatalf("deleted the empty active segment (%d)", n)
	}
	if _, err := l.Append([]record.Record{{Value: []byte("after"), Timestamp: c.Now().UnixMilli()}}); err != nil {
		t.Fatal(err)
	}
	// start offset survives a reopen
	st.Close()
	st, l = openTest(t, fs, c, nil)
	defer st.Close()
	if l.StartOffset() != 40 || l.EndOffset() != 41 {
		t.Fatalf("after reopen: start %d end %d, want 40 41", l.StartOffset(), l.EndOffset())
	}
}

func TestRetentionMtimeFallback(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	fs.SetClock(c.Now)
	st, l := buildLogOpen(t, fs, c, map[string]string{"segment.bytes": "2000", "retention.ms": "3600000"}, 40)
	defer st.Close()
	l.mu.Lock()
	for _, s := range l.segs {
		s.maxTs = -1 // as for V0 data: no timestamps
	}
	l.mu.Unlock()
	c.Add(30 * time.Minute)
	if n, _ := l.ApplyRetention(); n != 0 {
		t.Fatalf("deleted %d", n)
	}
	c.Add(31 * time.Minute)
	if n, _ := l.ApplyRetention(); n != 4 {
		t.Fatalf("deleted %d by mtime, want 4", n)
	}
}

func TestFlushMessagesAdvancesRecoveryPoint(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, map[string]string{"flush.messages": "5"})
	defer st.Close()
	l.Append(recs(3, "a", 0))
	if rp := l.RecoveryPoint(); rp != 0 {
		t.Fatalf("recovery point %d before flush.messages", rp)
	}
	l.Append(recs(3, "b", 0))
	if rp := l.RecoveryPoint(); rp != 6 {
		t.Fatalf("recovery point %d after flush.messages", rp)
	}
	// the flushed records survive a crash
	after := fs.Crash()
	st2, l2 := openTest(t, after, c, nil)
	defer st2.Close()
	if l2.EndOffset() != 6 {
		t.Fatalf("end after crash %d", l2.EndOffset())
	}
}

func TestFlushMs(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, map[string]string{"flush.ms": "1000"})
	defer st.Close()
	l.Append(recs(3, "a", 0))
	st.RunMaintenance(false, false)
	if rp := l.RecoveryPoint(); rp != 0 {
		t.Fatalf("flushed before flush.ms: %d", rp)
	}
	c.Add(1001 * time.Millisecond)
	st.RunMaintenance(false, false)
	if rp := l.RecoveryPoint(); rp != 3 {
		t.Fatalf("recovery point %d after flush.ms", rp)
	}
}

func buildLogOpen(t *testing.T, fs vfs.FS, c *clock, cfg map[string]string, n int) (*Store, *Log) {
	t.Helper()
	st, l := openTest(t, fs, c, cfg)
	for i := 0; i < n; i++ {
		rs := recs(1, "v", 0)
		rs[0].Value = make([]byte, 100)
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	return st, l
}

func TestRollFlushesInBackground(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	opt := testOptions(fs, c, map[string]string{"segment.bytes": "2000"})
	opt.NoBackground = false
	st, l := openAt(t, "/data", opt)
	defer st.Close()
	for i := 0; i < 15; i++ {
		rs := recs(1, "v", 0)
		rs[0].Value = make([]byte, 100)
		l.Append(rs)
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.RecoveryPoint() < 11 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if rp := l.RecoveryPoint(); rp < 11 {
		t.Fatalf("recovery point %d after a roll at 11", rp)
	}
}

func TestBackgroundWakesForRetention(t *testing.T) {
	for _, c := range []struct{ flush, retention, want time.Duration }{
		{time.Second, 100 * time.Millisecond, 100 * time.Millisecond},
		{time.Second, 30 * time.Second, time.Second},
		{time.Second, -1, time.Second},
	} {
		o := Options{FlushInterval: c.flush, RetentionInterval: c.retention}
		if got := o.tickInterval(); got != c.want {
			t.Errorf("flush %v, retention %v: wakes every %v, want %v", c.flush, c.retention, got, c.want)
		}
	}
}
