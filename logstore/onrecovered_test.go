package logstore

import (
	"os"
	"testing"

	"github.com/partfs/partfs/vfs"
)

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
