package inspect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/record"
)

// checkDataDir writes a small data directory with logstore.
func checkDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := logstore.Open(dir, logstore.Options{NoBackground: true,
		Defaults: map[string]string{"segment.bytes": "2000", "index.interval.bytes": "200", "compression.type": "gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Log("t", 0)
	for i := 0; i < 60; i++ {
		if _, err := l.Append([]record.Record{{Value: bytes.Repeat([]byte{'a' + byte(i%26)}, 80)}, {Value: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runCheck(t *testing.T, dir string) (bool, string) {
	t.Helper()
	var out bytes.Buffer
	damaged, err := Check(&out, dir)
	if err != nil {
		t.Fatal(err)
	}
	return damaged, out.String()
}

func TestCheckCleanDataDir(t *testing.T) {
	dir := checkDataDir(t)
	if damaged, out := runCheck(t, dir); damaged || !strings.Contains(out, ": OK") {
		t.Fatalf("healthy data dir reported damaged:\n%s", out)
	}
}

func TestCheckFindsDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(pdir string)
		want   string
	}{
		{"flipped byte", func(pdir string) {
			p := filepath.Join(pdir, "00000000000000000000.log")
			b, _ := os.ReadFile(p)
			b[300] ^= 0x40
			os.WriteFile(p, b, 0o644)
		}, "00000000000000000000.log: at position"},
		{"torn tail", func(pdir string) {
			p := filepath.Join(pdir, "00000000000000000000.log")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-7], 0o644)
		}, "00000000000000000000.log: at position"},
		{"bad index entry", func(pdir string) {
			p := filepath.Join(pdir, "00000000000000000000.index")
			b, _ := os.ReadFile(p)
			b[7]++ // position of the first entry
			os.WriteFile(p, b, 0o644)
		}, "00000000000000000000.index"},
		{"index size", func(pdir string) {
			p := filepath.Join(pdir, "00000000000000000000.timeindex")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, 1, 2, 3), 0o644)
		}, "not a whole number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := checkDataDir(t)
			pdir := filepath.Join(dir, "t-0")
			tc.damage(pdir)
			before, _ := os.ReadFile(filepath.Join(pdir, "00000000000000000000.log"))
			damaged, out := runCheck(t, dir)
			if !damaged || !strings.Contains(out, tc.want) || !strings.Contains(out, "DAMAGE") {
				t.Fatalf("damage not reported (want %q):\n%s", tc.want, out)
			}
			after, _ := os.ReadFile(filepath.Join(pdir, "00000000000000000000.log"))
			if !bytes.Equal(before, after) {
				t.Fatal("check changed the segment")
			}
			t.Log(out)
		})
	}
}

// TestCheckSkipsWhatTheStoreSkips: check looks at the directories the
// store opens as partitions (kafkaname.ParsePartitionDir), so a damaged
// "t-01" beside "t-0", which the store does not open, is not reported,
// and the segment count is t-0's alone.
func TestCheckSkipsWhatTheStoreSkips(t *testing.T) {
	dir := checkDataDir(t)
	_, want := runCheck(t, dir)
	pdir := filepath.Join(dir, "t-01")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "t-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	b[300] ^= 0x40
	testutil.WriteFile(t, filepath.Join(pdir, "00000000000000000000.log"), b)
	damaged, out := runCheck(t, dir)
	if damaged || out != want {
		t.Fatalf("check of t-01 beside t-0:\n%s\nwant as without it:\n%s", out, want)
	}
	st, err := logstore.Open(dir, logstore.Options{NoBackground: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.Partitions("t"); err != nil || n != 1 {
		t.Fatalf("store opened %d partitions of t (%v), want 1", n, err)
	}
}

// TestCheckListsSegmentsAsTheStoreDoes: check reads the segment files the
// store lists (logstore.ListKafkaFiles): a .log name of 19 digits is no
// segment, and a segment name that is a symbolic link is reported as
// damage, not followed.
func TestCheckListsSegmentsAsTheStoreDoes(t *testing.T) {
	dir := checkDataDir(t)
	_, want := runCheck(t, dir)
	part := filepath.Join(dir, "t-0")
	testutil.WriteFile(t, filepath.Join(part, "9000000000000000000.log"), []byte("not a segment of the store"))
	if damaged, out := runCheck(t, dir); damaged || out != want {
		t.Fatalf("check with a 19-digit .log:\n%s\nwant as without it:\n%s", out, want)
	}
	link := filepath.Join(part, "09000000000000000000.log")
	if err := os.Symlink(filepath.Join(part, "00000000000000000000.log"), link); err != nil {
		t.Fatal(err)
	}
	if damaged, out := runCheck(t, dir); !damaged || !strings.Contains(out, link+": a symbolic link") {
		t.Fatalf("check with a symlinked segment:\n%s", out)
	}
}
