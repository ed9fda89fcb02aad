package systest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Layout of buildDataDir's topic "t": 40 batches of 170 bytes, one record
// each; segments at 0, 11, 22, 33 (11 batches each, 7 in the last).
const (
	tBatch = 170
	tEnd   = 40
)

func tSeg(dir string, base int64, suffix string) string {
	return filepath.Join(dir, "t-0", fmt.Sprintf("%020d%s", base, suffix))
}

// damageCase is one damage to a cleanly closed data directory and what a
// recovery must give for topic t (or z).
type damageCase struct {
	name   string
	damage func(t *testing.T, dir string)
	clean  bool // keep .kafka_cleanshutdown (no recovery scan)
	// partfs check: exit code (1 damaged, 0 clean) and substrings of its output
	checkCode int
	checkSays []string
	// recovery
	topic      string
	wantEnd    int64
	holes      [][2]int64 // offset ranges [a, b) not served
	corruptAt  string     // a read fails with ErrCorrupt naming this file and position ("file@pos")
	checkAfter int        // exit code of partfs check after the recovered store is closed
}

func flipAt(path string, pos int64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		editFile(t, path, func(b []byte) []byte { b[pos] ^= 0x10; return b })
	}
}

func xorAt(path string, pos int64, bits byte) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		editFile(t, path, func(b []byte) []byte { b[pos] ^= bits; return b })
	}
}

// offsetDamage are the damages to base offsets, which no CRC covers; the
// fault table runs them as the damage table runs its cases.
func offsetDamage(dir string) []damageCase {
	seg11, seg33 := tSeg(dir, 11, ".log"), tSeg(dir, 33, ".log")
	pos := func(n int64) string { return fmt.Sprintf("position %d", n) }
	dupLast := func(t *testing.T, d string) {
		editFile(t, seg33, func(b []byte) []byte { return append(b, b[6*tBatch:]...) })
	}
	return []damageCase{
		{name: "base offset bit flip to the next offset (36 to 37)", damage: xorAt(seg33, 3*tBatch+7, 0x01),
			checkCode: 1, checkSays: []string{seg33, pos(3 * tBatch)}, wantEnd: 36},
		{name: "base offset bit flip far ahead after a clean stop", clean: true, damage: xorAt(seg33, 3*tBatch+5, 0x10),
			checkCode: 1, checkSays: []string{seg33, pos(3 * tBatch)}, wantEnd: tEnd, holes: [][2]int64{{36, 40}},
			corruptAt: fmt.Sprintf("%s@%d", seg33, 3*tBatch), checkAfter: 1},
		{name: "duplicated last batch", damage: dupLast,
			checkCode: 1, checkSays: []string{seg33, pos(7 * tBatch)}, wantEnd: tEnd},
		{name: "duplicated last batch after a clean stop", clean: true, damage: dupLast,
			checkCode: 1, checkSays: []string{seg33, pos(7 * tBatch)}, wantEnd: tEnd},
		{name: "base offset raised by one after a clean stop (36 to 37)", clean: true, damage: xorAt(seg33, 3*tBatch+7, 0x01),
			checkCode: 1, checkSays: []string{seg33, pos(3 * tBatch)}, wantEnd: tEnd, holes: [][2]int64{{36, 40}},
			corruptAt: fmt.Sprintf("%s@%d", seg33, 3*tBatch), checkAfter: 1},
		{name: "base offset lowered by one after a clean stop (36 to 35)", clean: true, damage: xorAt(seg33, 3*tBatch+7, 0x07),
			checkCode: 1, checkSays: []string{seg33, pos(3 * tBatch)}, wantEnd: tEnd, holes: [][2]int64{{36, 40}},
			corruptAt: fmt.Sprintf("%s@%d", seg33, 3*tBatch), checkAfter: 1},
		{name: "batch in the next segment's offsets, unclean with no recovery point", damage: func(t *testing.T, d string) {
			xorAt(seg11, 10*tBatch+7, 0x03)(t, d)
			if err := os.Remove(filepath.Join(dir, "recovery-point-offset-checkpoint")); err != nil {
				t.Fatal(err)
			}
		}, checkCode: 1, checkSays: []string{seg11, pos(10 * tBatch)}, wantEnd: 21},
	}
}

func damageCases(dir string) []damageCase {
	seg0, seg11, seg22, seg33 := tSeg(dir, 0, ".log"), tSeg(dir, 11, ".log"), tSeg(dir, 22, ".log"), tSeg(dir, 33, ".log")
	rp := filepath.Join(dir, "recovery-point-offset-checkpoint")
	pos := func(n int64) string { return fmt.Sprintf("position %d", n) }
	setRP := func(text string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(rp, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill := func(path string, b byte) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			editFile(t, path, func(d []byte) []byte {
				for i := range d {
					d[i] = b
				}
				return d
			})
		}
	}
	cut := func(path string, n int) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { editFile(t, path, func(d []byte) []byte { return d[:len(d)-n] }) }
	}
	remove := func(paths ...string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			for _, p := range paths {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// indexCases are the damages of one index kind: the file of segment
	// seg garbled or missing, segment 0's cut by partial bytes.
	indexCases := func(suffix string, seg int64, partial int) []damageCase {
		f, first := tSeg(dir, seg, suffix), tSeg(dir, 0, suffix)
		return []damageCase{
			{name: "garbled " + suffix, damage: fill(f, 0x7f), checkCode: 1, checkSays: []string{f}, wantEnd: tEnd},
			{name: "truncated " + suffix + " (partial entry)", damage: cut(first, partial), checkCode: 1, checkSays: []string{first}, wantEnd: tEnd},
			{name: "missing " + suffix, damage: remove(f), checkCode: -1, checkSays: []string{f}, wantEnd: tEnd},
		}
	}
	cases := []damageCase{
		{name: "bit flip in a batch header (lastOffsetDelta)", damage: flipAt(seg33, 2*tBatch+23),
			checkCode: 1, checkSays: []string{seg33, pos(2 * tBatch)}, wantEnd: 35},
		{name: "bit flip in a record value", damage: flipAt(seg33, 5*tBatch-10),
			checkCode: 1, checkSays: []string{seg33, pos(4 * tBatch)}, wantEnd: 37},
		{name: "bit flip in a compressed payload", topic: "z", damage: flipZ(dir, 3),
			checkCode: 1, checkSays: []string{"z-0/00000000000000000150.log", "position"}, wantEnd: 165},
		{name: "bit flip below the recovery point after a clean stop", clean: true, damage: flipAt(seg11, 5*tBatch+70),
			checkCode: 1, checkSays: []string{seg11, pos(5 * tBatch)}, wantEnd: tEnd,
			holes: [][2]int64{{16, 22}}, corruptAt: fmt.Sprintf("%s@%d", seg11, 5*tBatch), checkAfter: 1},
		{name: "bit flip in a middle segment, unclean with no recovery point", damage: func(t *testing.T, d string) {
			flipAt(seg11, 5*tBatch+70)(t, d)
			remove(rp)(t, d)
		}, checkCode: 1, checkSays: []string{seg11, pos(5 * tBatch)}, wantEnd: 16},
		{name: "truncated tail", damage: cut(seg33, 50),
			checkCode: 1, checkSays: []string{seg33, pos(6 * tBatch)}, wantEnd: 39},
		{name: "zeroed tail (preallocated zeros after the last batch)", damage: func(t *testing.T, d string) {
			editFile(t, seg33, func(b []byte) []byte { return append(b, make([]byte, 4096)...) })
		}, checkCode: 1, checkSays: []string{seg33, pos(7 * tBatch)}, wantEnd: tEnd},
		{name: "zeroed last batch", damage: func(t *testing.T, d string) {
			editFile(t, seg33, func(b []byte) []byte { clear(b[6*tBatch:]); return b })
		}, checkCode: 1, checkSays: []string{seg33, pos(6 * tBatch)}, wantEnd: 39},
	}
	cases = append(cases, indexCases(".index", 11, 3)...)
	cases = append(cases, indexCases(".timeindex", 22, 5)...)
	return append(cases, []damageCase{
		{name: "recovery-point checkpoint with a bad count", damage: setRP("0\n5\nt 0 40\nz 0 200\n"),
			checkCode: 1, checkSays: []string{rp}, wantEnd: tEnd},
		{name: "recovery-point checkpoint with a bad number", damage: setRP("0\n2\nt 0 4x0\nz 0 200\n"),
			checkCode: 1, checkSays: []string{rp, "line 3"}, wantEnd: tEnd},
		{name: "log-start-offset checkpoint with a bad number", damage: func(t *testing.T, d string) {
			testutil.WriteFile(t, filepath.Join(d, "log-start-offset-checkpoint"), []byte("0\n1\nt 0 -x\n"))
		}, checkCode: 1, checkSays: []string{"log-start-offset-checkpoint", "line 3"}, wantEnd: tEnd},
		{name: "recovery-point checkpoint past the log end, torn tail", damage: func(t *testing.T, d string) {
			setRP("0\n2\nt 0 999\nz 0 200\n")(t, d)
			cut(seg33, 50)(t, d)
		}, checkCode: 1, checkSays: []string{rp, "999", seg33}, wantEnd: 39},
		{name: "missing segment in the middle", clean: true,
			damage:    remove(seg11, tSeg(dir, 11, ".index"), tSeg(dir, 11, ".timeindex")),
			checkCode: -1, checkSays: []string{seg22, "11"}, wantEnd: tEnd, holes: [][2]int64{{11, 22}}, checkAfter: -1},
		{name: "missing segment in the middle, unclean", damage: remove(seg22, tSeg(dir, 22, ".index"), tSeg(dir, 22, ".timeindex")),
			checkCode: -1, checkSays: []string{seg33, "22"}, wantEnd: tEnd, holes: [][2]int64{{22, 33}}, checkAfter: -1},
		{name: ".cleaned leftovers", damage: func(t *testing.T, d string) {
			testutil.WriteFile(t, seg0+".cleaned", []byte("garbage of an interrupted cleaning"))
			testutil.WriteFile(t, tSeg(dir, 0, ".index.cleaned"), make([]byte, 80))
		}, checkCode: -1, checkSays: []string{seg0 + ".cleaned"}, wantEnd: tEnd},
		{name: ".swap leftover of a finished cleaning (segments 0 and 11 merged)", damage: func(t *testing.T, d string) {
			a, b := testutil.ReadFile(t, seg0), testutil.ReadFile(t, seg11)
			testutil.WriteFile(t, seg0+".swap", append(a, b...))
		}, checkCode: -1, checkSays: []string{seg0 + ".swap"}, wantEnd: tEnd},
		{name: "segment file of garbage", damage: func(t *testing.T, d string) {
			editFile(t, seg22, func(b []byte) []byte {
				for i := range b {
					b[i] = byte(i*7 + 3)
				}
				return b
			})
			remove(rp)(t, d)
		}, checkCode: 1, checkSays: []string{seg22, pos(0)}, wantEnd: 22},
	}...)
}

// flipZ flips a byte inside the compressed payload of batch i of z's last
// segment (base 150).
func flipZ(dir string, i int) func(t *testing.T, dir string) {
	return func(t *testing.T, _ string) {
		path := filepath.Join(dir, "z-0", "00000000000000000150.log")
		bs := batchesOf(t, path)
		if bs[i].codec != record.Gzip || bs[i].base != 150+5*int64(i) {
			t.Fatalf("layout changed: %+v", bs[i])
		}
		flipAt(path, bs[i].pos+61+12)(t, dir)
	}
}

func TestDamageTable(t *testing.T) {
	root := t.TempDir()
	for i, tc := range damageCases("") {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(root, fmt.Sprint(i))
			m := buildDataDir(t, dir)
			runDamage(t, dir, damageCases(dir)[i], m)
		})
	}
}

// applyDamage damages dir as tc says (an unclean stop unless tc.clean),
// defaulting tc's topic to t.
func applyDamage(t *testing.T, dir string, tc *damageCase) {
	t.Helper()
	if tc.topic == "" {
		tc.topic = "t"
	}
	if !tc.clean {
		if err := os.Remove(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
			t.Fatal(err)
		}
	}
	tc.damage(t, dir)
}

func runDamage(t *testing.T, dir string, tc damageCase, m model) {
	applyDamage(t, dir, &tc)
	out, code := runPartfs(t, "check", dir)
	t.Logf("partfs check:\n%s", out)
	if tc.checkCode >= 0 && code != tc.checkCode {
		t.Errorf("partfs check exit %d, want %d", code, tc.checkCode)
	}
	for _, s := range tc.checkSays {
		if !strings.Contains(out, s) {
			t.Errorf("partfs check does not say %q", s)
		}
	}
	mdir := dir + ".mount"
	run(t, "cp", "-a", dir, mdir)
	t.Run("mount", func(t *testing.T) { mountDamaged(t, mdir, tc, m) })
	lg := testutil.NewLogger()
	st, err := openStore(t, dir, lg.Entry)
	if err != nil {
		t.Fatalf("open after damage: %v\nlog:\n%s", err, lg.Buf)
	}
	got := readPartition(t, st, tc.topic, 0, m[tpKey(tc.topic, 0)])
	checkServed(t, tc, got)
	checkLookups(t, st, tc)
	if err := st.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	t.Logf("store log:\n%s", lg.Buf)
	if left := tempLeftovers(t, dir); len(left) > 0 {
		t.Errorf("leftovers after recovery: %v", left)
	}
	out, code = runPartfs(t, "check", dir)
	if tc.checkAfter >= 0 && code != tc.checkAfter {
		t.Errorf("partfs check after recovery: exit %d, want %d:\n%s", code, tc.checkAfter, out)
	}
}

// checkServed compares the served offsets with [0, wantEnd) minus holes.
func checkServed(t *testing.T, tc damageCase, got served) {
	t.Helper()
	if got.end != tc.wantEnd {
		t.Errorf("log end offset %d, want %d", got.end, tc.wantEnd)
	}
	var want []int64
	for o := int64(0); o < tc.wantEnd; o++ {
		if !inHoles(o, tc.holes) {
			want = append(want, o)
		}
	}
	if fmt.Sprint(got.offsets) != fmt.Sprint(want) {
		t.Errorf("served offsets %v, want %v", got.offsets, want)
	}
	switch {
	case tc.corruptAt == "" && got.err != nil:
		t.Errorf("read error: %v", got.err)
	case tc.corruptAt != "":
		var ce *record.CorruptionError
		if !errors.Is(got.err, partlog.ErrCorrupt) || !errors.As(got.err, &ce) {
			t.Fatalf("read error %v, want ErrCorrupt with a record.CorruptionError naming file and position", got.err)
		}
		if at := fmt.Sprintf("%s@%d", ce.File, ce.Pos); at != tc.corruptAt {
			t.Errorf("corruption at %s, want %s", at, tc.corruptAt)
		}
	}
}

func inHoles(o int64, holes [][2]int64) bool {
	for _, h := range holes {
		if o >= h[0] && o < h[1] {
			return true
		}
	}
	return false
}

// checkLookups reads from every offset below the end: the first record
// served is that offset (or the next one after a hole), through the index.
func checkLookups(t *testing.T, st partlog.Store, tc damageCase) {
	t.Helper()
	l, err := st.Partition(tc.topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	segs, release := l.Segments()
	defer release()
	for o := int64(0); o < tc.wantEnd; o++ {
		want := o
		for inHoles(want, tc.holes) {
			want++
		}
		if want >= tc.wantEnd || inHoles(o, tc.holes) {
			continue
		}
		first := int64(-1)
		for _, seg := range segs {
			if o < seg.Base || o >= seg.Next {
				continue
			}
			_ = l.Read(seg, o, func(r *record.Record) bool { first = r.Offset; return false })
		}
		if tc.corruptAt != "" && first == -1 {
			continue // the batch holding o is corrupt
		}
		if first != want {
			t.Errorf("read from offset %d starts at %d", o, first)
		}
	}
}

// mountDamaged mounts a damaged data directory with the real daemon and
// reads the partition's log.jsonl: the records served are the ones a
// recovery keeps, each as written; reading into damage fails with EIO and a
// log line naming the file and position; the daemon does not crash.
func mountDamaged(t *testing.T, data string, tc damageCase, m model) {
	d := startDaemon(t, data, data+".mnt")
	raw, err := os.ReadFile(d.path(tc.topic, "0", "log.jsonl"))
	want := m[tpKey(tc.topic, 0)]
	var offs []int64
	recs, perr := parseJSONL(raw)
	if perr != nil {
		t.Fatalf("served a %v", perr)
	}
	for _, r := range recs {
		if r.Value == nil {
			t.Fatalf("served a null value at offset %d", r.Offset)
		}
		if r.Offset >= int64(len(want)) || *r.Value != want[r.Offset] {
			t.Fatalf("offset %d: served %q, not what was written", r.Offset, *r.Value)
		}
		offs = append(offs, r.Offset)
	}
	if tc.corruptAt != "" {
		file, pos, _ := strings.Cut(tc.corruptAt, "@")
		file = strings.Replace(file, filepath.Dir(data)+"/"+filepath.Base(strings.TrimSuffix(data, ".mount")), data, 1)
		if testutil.Errno(err) != syscall.EIO {
			t.Errorf("reading into damage: %v, want EIO", err)
		}
		if !d.waitLog(5*time.Second, file, pos) {
			t.Errorf("no daemon log line names %s and position %s:\n%s", file, pos, tail(d.log.String(), 3000))
		}
		for _, o := range offs {
			if inHoles(o, tc.holes) {
				t.Errorf("served offset %d from the damaged batch range", o)
			}
		}
	} else {
		if err != nil {
			t.Errorf("read log.jsonl: %v", err)
		}
		var exp []int64
		for o := int64(0); o < tc.wantEnd; o++ {
			if !inHoles(o, tc.holes) {
				exp = append(exp, o)
			}
		}
		if fmt.Sprint(offs) != fmt.Sprint(exp) {
			t.Errorf("mount serves offsets %v, want %v", offs, exp)
		}
	}
	if end := statField(t, d, tc.topic+"/0", "log_end_offset"); end != tc.wantEnd {
		t.Errorf("stat log_end_offset %d, want %d", end, tc.wantEnd)
	}
	if d.panicked() {
		t.Fatalf("daemon panicked:\n%s", d.log)
	}
	d.stop()
	if left := tempLeftovers(t, data); len(left) > 0 {
		t.Errorf("leftovers after the mount: %v", left)
	}
}
