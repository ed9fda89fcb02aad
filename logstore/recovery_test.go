package logstore

import (
	"os"
	"testing"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// buildLog writes n single-record batches of 100-byte values into a fresh
// store with small segments, closes it, and returns the fs and the clock.
func buildLog(t *testing.T, n int, cfg map[string]string) (*vfs.CrashFS, *clock) {
	t.Helper()
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, cfg)
	for i := 0; i < n; i++ {
		rs := recs(1, "v", 0)
		rs[0].Value = make([]byte, 100)
		rs[0].Value[0] = byte(i)
		if _, err := l.Append(rs); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, c
}

func mutate(t *testing.T, fs vfs.FS, path string, fn func([]byte) []byte) {
	t.Helper()
	data := fn(readFileBytes(t, fs, path))
	f, err := fs.OpenFile(path, os.O_RDWR|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(data, 0)
	f.Close()
}

func TestRecoveryCases(t *testing.T) {
	cfg := map[string]string{"segment.bytes": "2000", "index.interval.bytes": "250"}
	const seg1 = "/data/t-0/00000000000000000011.log" // 11 batches of 170 bytes per segment
	cases := []struct {
		name    string
		damage  func(t *testing.T, fs vfs.FS)
		wantEnd int64
		keepRP  bool
	}{
		{"torn tail", func(t *testing.T, fs vfs.FS) {
			mutate(t, fs, "/data/t-0/00000000000000000033.log", func(b []byte) []byte { return b[:len(b)-50] })
		}, 39, false},
		{"zeroed tail", func(t *testing.T, fs vfs.FS) {
			mutate(t, fs, "/data/t-0/00000000000000000033.log", func(b []byte) []byte { return append(b, make([]byte, 4096)...) })
		}, 40, false},
		{"bit flip in the last batch", func(t *testing.T, fs vfs.FS) {
			mutate(t, fs, "/data/t-0/00000000000000000033.log", func(b []byte) []byte { b[len(b)-10] ^= 1; return b })
		}, 39, false},
		{"corrupt middle segment deletes later segments", func(t *testing.T, fs vfs.FS) {
			mutate(t, fs, seg1, func(b []byte) []byte { b[5*170+70] ^= 0xff; return b })
		}, 16, false},
		{"garbage index", func(t *testing.T, fs vfs.FS) {
			mutate(t, fs, "/data/t-0/00000000000000000011.index", func(b []byte) []byte {
				for i := range b {
					b[i] = 0x7f
				}
				return b
			})
		}, 40, true},
		{"missing index", func(t *testing.T, fs vfs.FS) { fs.Remove("/data/t-0/00000000000000000000.index") }, 40, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, c := buildLog(t, 40, cfg)
			if fileSize(t, fs, seg1) != 11*170 {
				t.Fatalf("layout changed: %s has %d bytes", seg1, fileSize(t, fs, seg1))
			}
			fs.Remove("/data/.kafka_cleanshutdown")
			// the recovery point says everything was flushed: only an index
			// check or the unclean scan of the last segment finds damage,
			// so recover everything as after a crash with no checkpoint
			if !tc.keepRP {
				fs.Remove("/data/recovery-point-offset-checkpoint")
			}
			tc.damage(t, fs)
			st, l := openTest(t, fs, c, cfg)
			defer st.Close()
			if end := l.EndOffset(); end != tc.wantEnd {
				t.Fatalf("end offset %d, want %d", end, tc.wantEnd)
			}
			all := readLog(t, l, 0)
			if int64(len(all)) != tc.wantEnd {
				t.Fatalf("%d records readable, want %d", len(all), tc.wantEnd)
			}
			for i, r := range all {
				if r.off != int64(i) || r.value[0] != byte(i) {
					t.Fatalf("record %d: %+v", i, r)
				}
			}
			for i := int64(0); i < tc.wantEnd; i += 7 {
				if got := readN(t, l, i, 1); got[0].off != i {
					t.Fatalf("lookup %d gave %d", i, got[0].off)
				}
			}
			if s := l.Stats(); s.Records != tc.wantEnd {
				t.Fatalf("stats records %d", s.Records)
			}
			// appends continue at the cut
			if first, err := l.Append(recs(1, "after", 0)); err != nil || first != tc.wantEnd {
				t.Fatalf("append after recovery: %d %v", first, err)
			}
		})
	}
}

func TestRecoveryPointLimitsScan(t *testing.T) {
	cfg := map[string]string{"segment.bytes": "2000", "index.interval.bytes": "250"}
	fs, c := buildLog(t, 40, cfg)
	fs.Remove("/data/.kafka_cleanshutdown")
	// damage in a segment below the recovery point is not scanned (Kafka
	// trusts flushed segments); the index check still passes
	mutate(t, fs, "/data/t-0/00000000000000000000.log", func(b []byte) []byte { b[3*170+70] ^= 0xff; return b })
	st, l := openTest(t, fs, c, cfg)
	defer st.Close()
	if l.EndOffset() != 40 {
		t.Fatalf("end %d", l.EndOffset())
	}
	segs, release := l.Segments()
	defer release()
	err := l.Read(segs[0], 0, func(r *record.Record) bool { return true })
	if err == nil {
		t.Fatal("reading the damaged batch did not fail")
	}
	t.Log(err)
}

func TestWrongIndexEntryFallsBackToScan(t *testing.T) {
	cfg := map[string]string{"segment.bytes": "2000", "index.interval.bytes": "250"}
	fs, c := buildLog(t, 40, cfg)
	// entry 0 of segment 0 is (2, 340); point it at batch 8 instead: the
	// cheap check of a clean open cannot see it, the lookup must
	mutate(t, fs, "/data/t-0/00000000000000000000.index", func(b []byte) []byte {
		b[7] = byte(8 * 170 & 0xff)
		b[6] = byte(8 * 170 >> 8)
		return b
	})
	st, l := openTest(t, fs, c, cfg)
	defer st.Close()
	for _, off := range []int64{2, 3, 5} {
		if got := readN(t, l, off, 1); len(got) != 1 || got[0].off != off {
			t.Fatalf("read %d gave %+v", off, got)
		}
	}
	l.mu.Lock()
	scheduled := len(l.rebuild)
	l.mu.Unlock()
	if scheduled != 1 {
		t.Fatalf("%d rebuilds scheduled", scheduled)
	}
	if err := st.RunMaintenance(false, false); err != nil {
		t.Fatal(err)
	}
	segs, release := l.Segments()
	defer release()
	s, _ := l.segmentByID(segs[0])
	defer l.releaseAll([]*segment{s})
	if err := s.oidx.SanityCheck(s.size); err != nil {
		t.Fatalf("index not rebuilt: %v", err)
	}
	if _, pos := s.oidx.Lookup(3); pos != 2*170 {
		t.Fatalf("rebuilt entry points at %d", pos)
	}
}

// TestOnRecoveredReportsScannedAndCut: an unclean open tells the caller how
// many bytes it re-validated and how many it cut from a torn tail.
func TestOnRecoveredReportsScannedAndCut(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, nil)
	if _, err := l.Append(recs(100, "r", 0)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	valid := fileSize(t, fs, "/data/t-0/00000000000000000000.log")
	crashed := fs.Crash() // unclean: no clean-shutdown marker
	_ = st.Close()

	f, err := crashed.OpenFile("/data/t-0/00000000000000000000.log", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("torn tail bytes"), valid); err != nil {
		t.Fatal(err)
	}
	_ = f.Sync()
	_ = f.Close()

	var scanned, cut int64
	opt := testOptions(crashed, c, nil)
	opt.OnRecovered = func(topic string, partition int, s, k int64) {
		if topic != "t" || partition != 0 {
			t.Errorf("recovered %s-%d, want t-0", topic, partition)
		}
		scanned += s
		cut += k
	}
	st2, err := Open("/data", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if scanned != valid || cut != int64(len("torn tail bytes")) {
		t.Fatalf("scanned %d cut %d, want %d and %d", scanned, cut, valid, len("torn tail bytes"))
	}
}
