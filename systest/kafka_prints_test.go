package systest

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// printsCase damages partition t-0's tile prints (path) in the cache
// directory before a mount; discarded: the mount must log that it
// discarded them (or, with file, that it discarded that cache file), and
// else must not. stop: the mount ends with a clean stop, which saves the
// prints again, instead of a SIGKILL.
type printsCase struct {
	name      string
	damage    func(t *testing.T, path string)
	discarded bool
	file      string
	stop      bool
}

// TestKafkaPrintsDamagedKilled: the tile prints of a partition in the
// cache directory (derived: the cluster's log is the truth), damaged in
// each way between SIGKILLed mounts, never change what the mount shows:
// st_size, the bytes of cat and of reads at positions are those of the
// first mount, which are the records kcat produced; an unusable file is
// discarded with a log line, a symbolic link in its place or at its
// temporary name is not followed, and a daemon SIGKILLed while it may be
// saving them leaves a cache the next mount is exact with.
func TestKafkaPrintsDamagedKilled(t *testing.T) {
	testutil.Kcat(t)
	_, addr := kafkaCluster(t)
	cache := t.TempDir()
	d := kafkaMount(t, addr, cache)
	d.sh("mkdir t t/1 u")
	want := seqLines(1, 40000)
	kcat(t, addr, want, "-P", "-t", "t", "-p", "0")
	kcat(t, addr, strings.ReplaceAll(seqLines(1, 30000), "\n", "-partition-one\n"), "-P", "-t", "t", "-p", "1")
	kcat(t, addr, seqLines(1, 9000), "-P", "-t", "u", "-p", "0")
	if got := d.sh("cat t/0/log"); got != want {
		t.Fatalf("first mount: cat shows %d bytes, kcat produced %d", len(got), len(want))
	}
	d.sh("cat t/1/log u/0/log >/dev/null")
	d.stop()
	path := filepath.Join(cache, "t-0.tile-prints")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("a clean stop left no tile prints: %v", err)
	}
	other, err1 := os.ReadFile(filepath.Join(cache, "t-1.tile-prints"))
	otherTopic, err2 := os.ReadFile(filepath.Join(cache, "u-0.tile-prints"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	positions := filepath.Join(cache, "t-0.fs-positions-decoded")
	goodPositions, err := os.ReadFile(positions)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "victim")
	rng := rand.New(rand.NewSource(1))
	write := func(b []byte) func(*testing.T, string) {
		return func(t *testing.T, p string) { testutil.WriteFile(t, p, b) }
	}
	cut := func(n int) printsCase {
		return printsCase{name: "cut to " + strconv.Itoa(n) + " bytes", damage: write(good[:n]), discarded: true}
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)-3] ^= 0x10
	cases := []printsCase{
		{name: "intact", damage: func(*testing.T, string) {}},
		cut(3), cut(20), cut(26), cut(len(good) / 2), cut(len(good) - 1),
		{name: "empty", damage: write(nil), discarded: true},
		{name: "garbage", damage: write(randomBytes(rng, len(good))), discarded: true},
		{name: "bit flipped", damage: write(flipped), discarded: true},
		{name: "appended to", damage: write(append(bytes.Clone(good), "x"...)), discarded: true},
		{name: "another partition's", damage: write(other), discarded: true},
		{name: "another topic's", damage: write(otherTopic), discarded: true},
		// fs's position sidecar of t-1 under t-0's name, the prints intact
		{name: "another partition's positions", damage: func(t *testing.T, p string) {
			b, err := os.ReadFile(filepath.Join(cache, "t-1.fs-positions-decoded"))
			if err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, filepath.Join(cache, "t-0.fs-positions-decoded"), b)
		}, discarded: true, file: "t-0.fs-positions-decoded"},
		{name: "deleted", damage: func(t *testing.T, p string) { _ = os.Remove(p) }},
		{name: "a directory", damage: func(t *testing.T, p string) {
			_ = os.Remove(p)
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, discarded: true},
		{name: "a FIFO", damage: func(t *testing.T, p string) {
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, discarded: true},
		// a link to the good prints: followed, they would be accepted
		{name: "a symlink", damage: func(t *testing.T, p string) {
			testutil.WriteFile(t, outside, good)
			symlinkOver(t, p, outside)
		}, discarded: true, stop: true},
		{name: "a symlink at the temporary name", damage: func(t *testing.T, p string) {
			_ = os.Remove(p) // the reads print again, the stop saves
			testutil.WriteFile(t, outside, good)
			symlinkOver(t, p+".tmp", outside)
		}, stop: true},
	}
	// exact checks st_size, reads at positions and cat against want,
	// with stat, dd and cat
	exact := func(d *daemon, when string) {
		t.Helper()
		if got := d.sh("stat -c %s t/0/log"); got != strconv.Itoa(len(want))+"\n" {
			t.Fatalf("%s: st_size %s, want %d\n%s", when, strings.TrimSpace(got), len(want), tail(d.log.String(), 3000))
		}
		for _, p := range []int{0, len(want) / 3, len(want) - 100} {
			got := d.sh("dd if=t/0/log iflag=skip_bytes,count_bytes skip=" + strconv.Itoa(p) + " count=100 status=none")
			if got != want[p:p+100] {
				t.Fatalf("%s: at %d: %q, want %q\n%s", when, p, got, want[p:p+100], tail(d.log.String(), 3000))
			}
		}
		if got := d.sh("cat t/0/log"); got != want {
			t.Fatalf("%s: cat shows %d bytes, not the %d kcat produced", when, len(got), len(want))
		}
	}
	for _, tc := range cases {
		_ = os.Remove(path)
		_ = os.Remove(path + ".tmp")
		testutil.WriteFile(t, path, good)
		testutil.WriteFile(t, positions, goodPositions)
		tc.damage(t, path)
		d = kafkaMount(t, addr, cache)
		exact(d, tc.name)
		line := []string{"tile prints discarded", "t-0.tile-prints"}
		if tc.file != "" {
			line = []string{"cache file discarded", tc.file}
		}
		if tc.discarded && !d.waitLog(5*time.Second, line...) {
			t.Errorf("%s: no log line says %q:\n%s", tc.name, line, tail(d.log.String(), 2000))
		} else if !tc.discarded && d.waitLog(0, "discarded") {
			t.Errorf("%s: a cache file was discarded:\n%s", tc.name, tail(d.log.String(), 2000))
		}
		if tc.stop {
			d.stop()
			if b, err := os.ReadFile(outside); err != nil || !bytes.Equal(b, good) {
				t.Errorf("%s: the symlink's target was changed (%d bytes, %v)", tc.name, len(b), err)
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("%s: after a clean stop the prints are not a regular file: %v", tc.name, err)
			}
		} else {
			d.kill9()
		}
		if d.panicked() {
			t.Fatalf("%s: panic:\n%s", tc.name, d.log)
		}
	}

	// SIGKILL at points of a clean stop, which saves the prints that the
	// reads made (none before) or extended (records added since): after
	// delays, and (atTemporary) as soon as the temporary file the save
	// writes appears
	const atTemporary = -1
	n := 40000
	for i, delay := range []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond,
		2 * time.Millisecond, 2500 * time.Microsecond, 3 * time.Millisecond, 5 * time.Millisecond, atTemporary, atTemporary} {
		if i%2 == 0 {
			_ = os.Remove(path)
		} else {
			more := seqLines(n+1, n+300)
			kcat(t, addr, more, "-P", "-t", "t", "-p", "0")
			want, n = want+more, n+300
		}
		if delay == atTemporary {
			_ = os.Remove(path + ".tmp") // one a kill left: the wait is for this stop's
		}
		d = kafkaMount(t, addr, cache)
		// the cluster may list the new end a moment after kcat's acknowledgement
		d.sh(`for i in $(seq 500); do [ "$(sed -n 's/^log_end_offset: //p' t/0/stat)" -ge ` + strconv.Itoa(n) + ` ] && exit 0; sleep 0.02; done; exit 1`)
		exact(d, "before a kill while saving")
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		if delay == atTemporary {
			for end := time.Now().Add(5 * time.Second); d.running() && time.Now().Before(end); {
				if _, err := os.Lstat(path + ".tmp"); err == nil {
					break
				}
			}
		}
		time.Sleep(max(delay, 0))
		d.kill9()
		when := "SIGKILL " + delay.String() + " into a stop"
		if delay == atTemporary {
			when = "SIGKILL once the temporary file appeared"
		}
		t.Logf("%s: %s", when, printsState(path))
		d = kafkaMount(t, addr, cache)
		exact(d, "after a "+when)
		d.kill9()
		if d.panicked() {
			t.Fatalf("after a %s: panic:\n%s", when, d.log)
		}
	}
}

// printsState says what a kill left of the prints file at path and its
// temporary file.
func printsState(path string) string {
	state := func(p string) string {
		fi, err := os.Lstat(p)
		if err != nil {
			return "none"
		}
		return strconv.FormatInt(fi.Size(), 10) + " bytes"
	}
	return "prints " + state(path) + ", temporary " + state(path+".tmp")
}
