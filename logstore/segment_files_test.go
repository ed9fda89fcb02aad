package logstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
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

// TestListKafkaFilesSortsAndRefuses: the listing parses base offsets and
// kinds, orders by base offset (a 21-digit name in its place, the metadata
// files last), leaves other names out and puts a link or a directory under
// a Kafka name among the refused.
func TestListKafkaFilesSortsAndRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"00000000000000000010.log", "000000000000000000005.log", "00000000000000000010.index.swap",
		"partition.metadata", "00000000000000000000.log", "notes.txt", "0000000000000000001.log"} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	os.Symlink(filepath.Join(dir, "notes.txt"), filepath.Join(dir, "00000000000000000003.log"))
	os.Mkdir(filepath.Join(dir, "00000000000000000004.timeindex"), 0o755)
	files, refused, err := ListKafkaFiles(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	got := func(fs []KafkaFile) (s []string) {
		for _, f := range fs {
			s = append(s, fmt.Sprintf("%d%s", f.Base, f.Kind))
		}
		return s
	}
	if want := []string{"0.log", "5.log", "10.index.swap", "10.log", "-1partition.metadata"}; !slices.Equal(got(files), want) {
		t.Errorf("files %v, want %v", got(files), want)
	}
	if want := []string{"3.log", "4.timeindex"}; !slices.Equal(got(refused), want) {
		t.Errorf("refused %v, want %v", got(refused), want)
	}
}
