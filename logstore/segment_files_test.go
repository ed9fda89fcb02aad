package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// TestSegmentFilesRefuseLinksAndSpecialFiles: under Kafka names, a symbolic
// link, a FIFO and a directory are neither listed nor opened (an open of
// the FIFO must not block); names Kafka does not use are refused even as
// regular files.
func TestSegmentFilesRefuseLinksAndSpecialFiles(t *testing.T) {
	st, l := openAt(t, t.TempDir(), Options{Logger: testutil.NewLogger().Entry, NoBackground: true})
	defer st.Close()
	if _, err := l.Append([]record.Record{{Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	part := l.Dir()
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("secret"), 0o600)
	os.Symlink(outside, filepath.Join(part, "00000000000000000007.log"))
	os.Symlink(outside, filepath.Join(part, "leader-epoch-checkpoint.link"))
	if err := syscall.Mkfifo(filepath.Join(part, "00000000000000000008.index"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(part, "00000000000000000009.timeindex"), 0o755)
	os.WriteFile(filepath.Join(part, "0000000000000000001.log"), []byte("19 digits"), 0o644)
	os.WriteFile(filepath.Join(part, "00000000000000000000.log.bak"), []byte("other suffix"), 0o644)
	refused := []string{"00000000000000000007.log", "leader-epoch-checkpoint.link", "00000000000000000008.index",
		"00000000000000000009.timeindex", "0000000000000000001.log", "00000000000000000000.log.bak"}
	fis, err := l.SegmentFiles()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, fi := range fis {
		listed[fi.Name] = true
	}
	if !listed["00000000000000000000.log"] || !listed["partition.metadata"] {
		t.Errorf("SegmentFiles %v lacks the .log or partition.metadata", fis)
	}
	for _, name := range refused {
		if listed[name] {
			t.Errorf("SegmentFiles lists %s", name)
		}
		if _, err := l.StatSegmentFile(name); !errors.Is(err, partlog.ErrNotFound) {
			t.Errorf("StatSegmentFile(%s): %v, want ErrNotFound", name, err)
		}
	}
	for _, name := range []string{"00000000000000000000.log.deleted", "00000000000000000012.snapshot", "00000000000000000000.txnindex.swap"} {
		if !kafkaFile(name) {
			t.Errorf("%s is one of Kafka's names", name)
		}
	}
}
