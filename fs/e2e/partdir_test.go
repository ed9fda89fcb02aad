package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/record"
)

func TestMetricsFile(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && seq 1 5 >> t/0/log && cat t/0/log > /dev/null")
	if got := e.Sh("ls -a | grep -c metrics"); got != "1\n" {
		t.Fatalf(".metrics not listed")
	}
	if got := e.Sh("cat .metrics"); !strings.Contains(got, `partfs_appended_records_total{partition="0",topic="t"} 5`) {
		t.Fatalf(".metrics lacks the append counter:\n%s", got)
	}
	if got := e.Sh("cat .metrics"); !strings.Contains(got, `partfs_fuse_operations_total{op="read"}`) {
		t.Fatalf(".metrics lacks FUSE operation counts")
	}
}

// TestConfigPersistsAcrossMounts: config writes survive a remount; mount
// --config defaults show where the topic sets nothing.
func TestConfigPersistsAcrossMounts(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && echo retention.ms=12345 >> t/config")
	e.Unmount()
	r := mountAt(t, e.data, mountOpt{defaults: map[string]string{"retention.ms": "999", "segment.bytes": "1048576"}})
	got := r.Sh("grep -E '^(retention.ms|segment.bytes)=' t/config")
	if got != "segment.bytes=1048576\nretention.ms=12345\n" && got != "retention.ms=12345\nsegment.bytes=1048576\n" {
		t.Fatalf("config after remount: %q", got)
	}
}

// TestCompressionTypeApplies: batches written after compression.type=X
// carry codec X on disk and read back the same.
func TestCompressionTypeApplies(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t")
	var want strings.Builder
	for _, codec := range []string{"gzip", "snappy", "lz4", "zstd", "none"} {
		e.Sh("echo compression.type=" + codec + " >> t/config")
		line := strings.Repeat(codec, 50)
		e.Sh("for i in 1 2 3; do echo " + line + "; done >> t/0/log")
		want.WriteString(strings.Repeat(line+"\n", 3))
	}
	if got := e.Sh("cat t/0/log"); got != want.String() {
		t.Fatalf("read back differs")
	}
	e.Unmount()
	seg := filepath.Join(e.data, "t-0", "00000000000000000000.log")
	f, err := os.Open(seg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	sc := record.NewScanner(f, 0, st.Size(), seg)
	var codecs []string
	for sc.Next() {
		c := sc.Batch().Header.Codec().String()
		if len(codecs) == 0 || codecs[len(codecs)-1] != c {
			codecs = append(codecs, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(codecs, ","); got != "gzip,snappy,lz4,zstd,none" {
		t.Fatalf("batch codecs %s", got)
	}
}

// TestTimeWindowsAgreeWithLinearScan sets timestamps through log.jsonl
// (out of order, over several segments) and checks every form of @time/T.
func TestTimeWindowsAgreeWithLinearScan(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && echo segment.bytes=2048 >> t/config")
	now := time.Now()
	base := now.Add(-2 * time.Hour).UnixMilli()
	rng := rand.New(rand.NewSource(7))
	const n = 400
	ts := make([]int64, n)
	for i := range ts {
		ts[i] = base + int64(rng.Intn(7000))*1000 // within ~2 h, out of order
	}
	for i := 0; i < n; i += 20 {
		var b strings.Builder
		for j := i; j < i+20; j++ {
			fmt.Fprintf(&b, `{"value":"r%d","timestamp":%d}`+"\n", j, ts[j])
		}
		if err := e.AppendOnce("t/0/log.jsonl", b.String()); err != nil {
			t.Fatal(err)
		}
	}
	if segs := e.Sh("grep '^segments:' t/0/stat"); segs == "segments: 1\n" {
		t.Fatalf("want several segments, have %s", segs)
	}
	firstAtOrAfter := func(T int64) int {
		for i, v := range ts {
			if v >= T {
				return i
			}
		}
		return n
	}
	maxAt := 0
	for i, v := range ts {
		if v > ts[maxAt] {
			maxAt = i
		}
	}
	mid := ts[n/2]
	cases := map[string]int{
		"earliest":                    0,
		"latest":                      n,
		"max":                         maxAt,
		fmt.Sprint(mid):               firstAtOrAfter(mid),
		fmt.Sprint(mid + 1):           firstAtOrAfter(mid + 1),
		fmt.Sprint(base + 10_000_000): n,
		time.UnixMilli(mid).UTC().Format(time.RFC3339Nano):                                firstAtOrAfter(mid),
		time.UnixMilli(mid + 500).In(time.FixedZone("", 5*3600)).Format(time.RFC3339Nano): firstAtOrAfter(mid + 500),
		time.UnixMilli(mid - mid%1000).UTC().Format(time.RFC3339):                         firstAtOrAfter(mid - mid%1000),
		"-90m":  -1, // relative: checked against the clock below
		"-1h5m": -1,
		"-1d":   0,
	}
	for spec, want := range cases {
		if want < 0 {
			d, _ := time.ParseDuration(strings.TrimPrefix(spec, "-"))
			lo, hi := firstAtOrAfter(time.Now().Add(-d).UnixMilli()), firstAtOrAfter(now.Add(-d).UnixMilli()-5000)
			got := firstOffset(t, e, "t/0/@time/"+spec, n)
			if got < hi || got > lo {
				t.Errorf("@time/%s starts at %d, want within [%d, %d]", spec, got, hi, lo)
			}
			continue
		}
		if got := firstOffset(t, e, "t/0/@time/"+spec, n); got != want {
			t.Errorf("@time/%s starts at offset %d, want %d", spec, got, want)
		}
	}
	// A range T1..T2 holds offsets [o(T1), o(T2)); its size is exact.
	t1, t2 := ts[100], ts[300]
	o1, o2 := firstAtOrAfter(t1), max(firstAtOrAfter(t2), firstAtOrAfter(t1))
	var want strings.Builder
	for i := o1; i < o2; i++ {
		fmt.Fprintf(&want, "r%d\n", i)
	}
	rng2 := fmt.Sprintf("t/0/@time/%d..%d", t1, t2)
	if got := e.Sh("cat " + rng2); got != want.String() {
		t.Errorf("%s = %q, want %q", rng2, got, want.String())
	}
	if got := e.Sh("stat -c %s " + rng2); got != fmt.Sprintf("%d\n", want.Len()) {
		t.Errorf("size of %s = %s, want %d", rng2, got, want.Len())
	}
}

// firstOffset returns the offset of the first record of a view, or n if empty.
func firstOffset(t *testing.T, e *env, path string, n int) int {
	t.Helper()
	out := e.Sh("head -1 '" + path + ".jsonl' | jq .offset")
	if out == "" {
		return n
	}
	var off int
	fmt.Sscan(out, &off)
	return off
}
