package logstore

import (
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// topicGenBase builds /data with topic t at retention.ms=-1 (its entry
// written twice: generation 2, the first without retention.ms), 40 records 8 days older than the clock
// (past the default 7-day retention), cleanly closed; it returns the
// topics file as it was at generation 1.
func topicGenBase(t *testing.T) (*vfs.CrashFS, *clock, string) {
	t.Helper()
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, map[string]string{"segment.bytes": "2000"})
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "retention.bytes", Value: "-1"}}); err != nil {
		t.Fatal(err)
	}
	older := string(readFileBytes(t, fs, "/data/"+TopicsFile)) // without retention.ms=-1
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "retention.ms", Value: "-1"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		rs := recs(1, "v", c.Now().UnixMilli())
		rs[0].Value = make([]byte, 100)
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	c.Add(8 * 24 * time.Hour)
	return fs, c, older
}

// TestTopicGenerationGuardsRetention: with partfs-topics.json missing, or
// an older copy of it put back, the partition keeps every record through
// retention passes and reopens; writing the topic's configuration again
// lifts the guard.
func TestTopicGenerationGuardsRetention(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(fs *vfs.CrashFS, older string)
	}{
		{"missing", func(fs *vfs.CrashFS, _ string) { fs.Remove("/data/" + TopicsFile) }},
		{"older copy", func(fs *vfs.CrashFS, older string) { writeFile(t, fs, "/data/"+TopicsFile, older) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, c, older := topicGenBase(t)
			tc.damage(fs, older)
			for round := 0; round < 2; round++ { // the guard survives a clean close
				st, l := openTest(t, fs, c, map[string]string{"segment.bytes": "2000"})
				if !l.RetentionHeld() {
					t.Fatalf("round %d: retention not suspended", round)
				}
				st.RunMaintenance(false, false)
				if n, err := l.ApplyRetention(); n != 0 || err != nil {
					t.Fatalf("round %d: retention deleted %d segments (%v)", round, n, err)
				}
				if l.StartOffset() != 0 || l.EndOffset() != 40 {
					t.Fatalf("round %d: start %d end %d, want 0 40", round, l.StartOffset(), l.EndOffset())
				}
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			st, l := openTest(t, fs, c, map[string]string{"segment.bytes": "2000"})
			if err := st.SetTopicConfig("t", []partlog.KV{{Key: "retention.ms", Value: "3600000"}}); err != nil {
				t.Fatal(err)
			}
			if l.RetentionHeld() {
				t.Fatal("retention still suspended after the configuration was written")
			}
			if n, err := l.ApplyRetention(); n == 0 || err != nil {
				t.Fatalf("retention deleted %d segments (%v) after the guard was lifted", n, err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st, l = openTest(t, fs, c, map[string]string{"segment.bytes": "2000"})
			defer st.Close()
			if l.RetentionHeld() {
				t.Fatal("retention suspended again after a reopen at the new generation")
			}
		})
	}
}

// TestTopicGenerationOlderFilesGuardNothing: a topics file entry and a
// sidecar without generations open as before.
func TestTopicGenerationOlderFilesGuardNothing(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, nil)
	if _, err := l.Append(recs(3, "v", c.Now().UnixMilli())); err != nil {
		t.Fatal(err)
	}
	st.Close()
	fs.Remove("/data/" + TopicsFile)
	st, l = openTest(t, fs, c, nil)
	defer st.Close()
	if l.RetentionHeld() {
		t.Fatal("retention suspended for a topic whose entry never had a generation")
	}
}
