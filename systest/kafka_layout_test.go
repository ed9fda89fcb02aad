package systest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
)

// copiesExactly checks that st_size of dir/log is its content's length
// plus the gap bytes stat reports, and that tar and rsync -a copy it
// byte-exactly (exit 0, same bytes as want).
func copiesExactly(t *testing.T, d *daemon, dir, want, when string) {
	t.Helper()
	st, err := os.Stat(d.path(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 2*int64(len(want)) {
		t.Fatalf("%s: st_size %d for %d bytes of records", when, st.Size(), len(want))
	}
	if gap := statField(t, d, dir, "gap_bytes"); st.Size() != int64(len(want))+gap {
		t.Fatalf("%s: st_size %d, content %d, gap_bytes %d", when, st.Size(), len(want), gap)
	}
	out := t.TempDir()
	tarball := filepath.Join(out, "p.tar")
	for _, cmd := range []string{
		"tar -cf " + tarball + " " + dir + "/log && tar -xf " + tarball + " -C " + out + "/tar",
		"rsync -a " + dir + "/log " + out + "/rsync/",
	} {
		_ = os.MkdirAll(filepath.Join(out, "tar"), 0o755)
		c := exec.Command("bash", "-c", cmd)
		c.Dir = d.mnt
		if b, err := c.CombinedOutput(); err != nil || len(b) > 0 {
			t.Fatalf("%s: %s: %v\n%s", when, cmd, err, b)
		}
	}
	for _, copied := range []string{filepath.Join(out, "tar", dir, "log"), filepath.Join(out, "rsync", "log")} {
		b, err := os.ReadFile(copied)
		if err != nil || string(b) != want {
			t.Fatalf("%s: %s holds %d bytes, want the %d of the records (%v)", when, copied, len(b), len(want), err)
		}
	}
}

// TestKafkaDenseLayout: records written through the mount (20,000 lines
// in one go, spanning 5 tiles) and records another client produced
// that the mount then read are laid out densely: st_size is what a read
// returns, tar and rsync -a copy the file byte-exactly, and so after a
// remount with the same cache directory. Only a partition found longer
// than the mount places by reading keeps gaps, and stat counts them.
func TestKafkaDenseLayout(t *testing.T) {
	testutil.Kcat(t)
	if _, err := exec.LookPath("rsync"); err != nil {
		t.Skip("rsync not installed")
	}
	_, addr := kafkaCluster(t)
	cache := t.TempDir()
	d := kafkaMount(t, addr, cache)
	d.sh("mkdir t && seq 1 20000 >> t/0/log")
	want := d.sh("seq 1 20000")
	copiesExactly(t, d, "t/0", want, "written through the mount")
	if got := statField(t, d, "t/0", "segments"); got != -1 {
		t.Fatalf("stat segments: %d, want -1 (a cluster's tiles are not segments)", got)
	}
	// another client's records, 3 tiles more, read by the mount
	more := d.sh("seq 20001 32000")
	kcat(t, addr, more, "-P", "-t", "t", "-p", "0")
	want += more
	// kcat exits once its records are acknowledged; a cluster may list the
	// new end (the last stable offset) a moment later
	for end := time.Now().Add(10 * time.Second); statField(t, d, "t/0", "log_end_offset") < 32000 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	copiesExactly(t, d, "t/0", want, "produced by kcat")
	d.stop()
	d = kafkaMount(t, addr, cache)
	copiesExactly(t, d, "t/0", want, "after a remount")
	d.stop()

	// A fresh cache: the first tiles are read to place the next ones,
	// the rest wait at their slots; stat says how many bytes are gaps
	// (rendering the 14 tiles it has not, fewer than it may).
	kcat(t, addr, d.sh("seq 32001 120000"), "-P", "-t", "t", "-p", "0")
	d = kafkaMount(t, addr, "")
	st, err := os.Stat(d.path("t", "0", "log"))
	if err != nil {
		t.Fatal(err)
	}
	gap := statField(t, d, "t/0", "gap_bytes")
	content := int64(len(d.sh("seq 1 120000")))
	if gap <= 0 || st.Size()-gap != content || st.Size() <= 2*content {
		t.Fatalf("fresh mount of 30 tiles: st_size %d, gap_bytes %d, content %d", st.Size(), gap, content)
	}
	d.stop()
}

// TestKafkaOpenSeesAcknowledged: a file opened right after kcat's
// produce was acknowledged shows that record, 20 times out of 20.
func TestKafkaOpenSeesAcknowledged(t *testing.T) {
	_, addr, d := kcatMount(t)
	d.sh("mkdir t && echo first >> t/0/log && cat t/0/log >/dev/null")
	misses := 0
	for i := 0; i < 20; i++ {
		rec := fmt.Sprintf("record %d", i)
		kcat(t, addr, rec+"\n", "-P", "-t", "t", "-p", "0")
		if got := d.sh("tail -n 1 t/0/log"); got != rec+"\n" {
			misses++
			t.Logf("try %d: tail -n 1 shows %q", i, got)
		}
	}
	if misses > 0 {
		t.Fatalf("%d of 20 opens right after an acknowledged produce missed it", misses)
	}
	d.stop()
}

// TestKafkaConfigEveryKey: `cat config` of a cluster's topic shows every
// key a local mount shows, and more the cluster reports, each once, and
// says where each value comes from; written back, it changes nothing.
func TestKafkaConfigEveryKey(t *testing.T) {
	_, addr := kafkaCluster(t)
	d := kafkaMount(t, addr, "")
	d.sh("mkdir t && echo retention.ms=86400000 >> t/config")
	text := d.sh("cat t/config")
	t.Logf("config:\n%s", text)
	got := configMap(t, d.path("t", "config"))
	for _, k := range config.Keys() {
		if _, ok := got[k]; !ok {
			t.Errorf("config lacks %s:\n%s", k, text)
		}
		if n := strings.Count(text, "\n"+k+"="); n > 1 {
			t.Errorf("config shows %s %d times", k, n)
		}
	}
	if got["retention.ms"] != "86400000" {
		t.Errorf("retention.ms=%s", got["retention.ms"])
	}
	for _, want := range []string{"\n# topic: ", " retention.ms", "\n# default: ", "\n# " + partlog.SourceAssumed + ": "} {
		if !strings.Contains(text, want) {
			t.Errorf("config does not say %q:\n%s", want, text)
		}
	}
	d.sh("cat t/config > /tmp/partfs-config-$$ && cat /tmp/partfs-config-$$ >> t/config; rm -f /tmp/partfs-config-$$")
	if again := configMap(t, d.path("t", "config")); !equalMaps(again, got) {
		t.Errorf("config written back changed it:\n%v\nwant\n%v", again, got)
	}
	d.stop()
}

// TestKafkaRemountKeepsLayout: a mount that read a partition of 30
// tiles (more than a mount places by reading) keeps their layout
// across a remount with the same cache directory: st_size and the bytes
// at every probed position are the same, and knowing them fetches
// nothing; with the tiles' prints removed from the cache the same
// remount fetches the tiles again to know them.
func TestKafkaRemountKeepsLayout(t *testing.T) {
	testutil.Kcat(t)
	c, addr := kafkaCluster(t)
	cache := t.TempDir()
	d := kafkaMount(t, addr, cache)
	d.sh("mkdir t")
	kcat(t, addr, d.sh("seq 1 120000"), "-P", "-t", "t", "-p", "0")
	d.sh("cat t/0/log > /dev/null")
	file := d.path("t", "0", "log")
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	size := st.Size()
	probes := []int64{0, size / 7, size / 3, size / 2, size - 300}
	var at []string
	for _, p := range probes {
		at = append(at, readAt(t, file, p, 200))
	}
	d.stop()

	fetches := testutil.CountRequests(c, kmsg.Fetch)
	// remount returns the fetches st_size took, and those st_size and
	// the probes took
	remount := func(when string) (int64, int64) {
		fetches.Store(0)
		d = kafkaMount(t, addr, cache)
		st, err := os.Stat(d.path("t", "0", "log"))
		if err != nil || st.Size() != size {
			t.Fatalf("%s: st_size %d, %d before (%v)", when, st.Size(), size, err)
		}
		n := fetches.Load()
		for i, p := range probes {
			if got := readAt(t, d.path("t", "0", "log"), p, 200); got != at[i] {
				t.Fatalf("%s: at position %d: %.40q, before %.40q", when, p, got, at[i])
			}
		}
		all := fetches.Load()
		d.stop()
		return n, all
	}
	kept, keptAll := remount("after a remount")
	if kept != 0 {
		t.Fatalf("st_size after a remount took %d fetches, want 0", kept)
	}
	prints, _ := filepath.Glob(filepath.Join(cache, "*.tile-prints"))
	if len(prints) != 1 {
		t.Fatalf("tile prints in the cache: %v", prints)
	}
	_ = os.Remove(prints[0])
	without, withoutAll := remount("after a remount without the tiles' prints")
	t.Logf("after a remount, fetches for st_size of 30 tiles: %d with the tiles' prints kept, %d without; for st_size and %d reads at positions: %d and %d",
		kept, without, len(probes), keptAll, withoutAll)
	if without == 0 {
		t.Fatal("a remount without the prints fetched nothing: the test does not show what they spare")
	}
}
