// Command fsbench measures partfs's filesystem against a minimal go-fuse
// baseline (bench/baseline) in the same run, and prints each figure with
// its ratio to the baseline or to its target (bench/results.md). Throughput is
// measured in -rounds rounds, baseline and partfs alternately, and
// reported as medians (the machine may be shared and noisy). bench/run.sh
// builds both and runs it.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bu "github.com/partfs/partfs/bench/internal/benchutil"
)

var (
	baselineBin = bu.BaselineFlag()
	sizeMiB     = flag.Int("size", 1024, "MiB of input lines")
	lineBytes   = flag.Int("line", 120, "bytes per input line, newline included (at least 12)")
	samples     = flag.Int("samples", 200, "random lookups per latency figure")
	parts       = flag.Int("partitions", 1000, "partitions for the idle RSS figure")
	batchBytes  = flag.Int("batch-bytes", 0, "partfs mount --batch-bytes (0: one batch per write(), the default)")
	warm        = flag.Bool("warm", true, "before each timed cat >> (both sides), write and remove a scratch file of the input's size plus an eighth in the work directory (bu.WarmFree)")
	jsonLines   = flag.Bool("json", false, `throughput rows with JSON lines ({"n":"%010d","msg":"say \"hi\"",...}, padded to -line bytes) rather than plain ones; not for the lookup rows`)
	only        = flag.String("only", "", `"head": only the lookup figures (the input written once, untimed); "throughput": only the rounds of cat >> log, cat log and cat log.jsonl`)
)

func main() {
	flag.Parse()
	if *jsonLines && *only != "throughput" {
		bu.Die(fmt.Errorf("-json needs -only throughput: the lookup rows check plain lines"))
	}
	dir, cleanup := bu.WorkDir("fsbench")
	defer cleanup()
	in := filepath.Join(dir, "input.txt")
	lines, size := genInput(in, int64(*sizeMiB)<<20)
	fmt.Printf("input: %d lines of %d bytes (newline included), %.2f GiB\n", lines, *lineBytes, float64(size)/(1<<30))

	if *only == "head" {
		partfsThroughput(dir, in, size)
		cmd := mountPartfs(filepath.Join(dir, "data"), filepath.Join(dir, "pmnt"))
		headLatency(dir, in, lines)
		cmd.Stop()
		return
	}
	runThroughput(dir, in, size)
	if *only == "throughput" {
		return
	}
	runPartfs(dir, in, size, lines)
}

// runThroughput measures the baseline and partfs alternately, so both
// see the same machine load, and prints each round and the medians.
func runThroughput(dir, in string, size int64) {
	var bw, br, pw, pr, pj, rw, rr, rj []float64
	for i := 0; i < bu.Rounds(); i++ {
		w, r := runBaseline(dir, in, size)
		bw, br = append(bw, w), append(br, r)
		w2, r2, j := partfsThroughput(dir, in, size)
		pw, pr, pj = append(pw, w2), append(pr, r2), append(pj, j)
		rw, rr, rj = append(rw, w2/w), append(rr, r2/r), append(rj, j/r)
		fmt.Printf("round %d: baseline write %.0f read %.0f MB/s; partfs write %.0f read %.0f jsonl %.0f MB/s (%.2fx %.2fx %.2fx)\n",
			i+1, w, r, w2, r2, j, w2/w, r2/r, j/r)
	}
	fmt.Printf("medians of %d rounds (ratio: median of the rounds' ratios):\n", len(bw))
	fmt.Printf("%-44s %8.0f MB/s\n", "baseline: cat >> file (write)", bu.Median(bw))
	fmt.Printf("%-44s %8.0f MB/s\n", "baseline: cat file > /dev/null (read)", bu.Median(br))
	fmt.Printf("%-44s %8.0f MB/s  %.2fx of baseline (target >= 0.9x)\n", "partfs: cat >> log (write)", bu.Median(pw), bu.Median(rw))
	fmt.Printf("%-44s %8.0f MB/s  %.2fx of baseline (target >= 0.7x)\n", "partfs: cat log > /dev/null", bu.Median(pr), bu.Median(rr))
	fmt.Printf("%-44s %8.0f MB/s  %.2fx of baseline (target >= 0.7x)\n", "partfs: cat log.jsonl > /dev/null", bu.Median(pj), bu.Median(rj))
}

// genInput writes -line-byte lines ("%010d", filler, newline) up to n
// bytes and returns how many lines and bytes it wrote. With -json each
// line is a JSON object, its quotes and a backslash to escape in the
// .jsonl view, padded with spaces.
func genInput(path string, n int64) (lines, size int64) {
	width := int64(max(*lineBytes, 12))
	filler := strings.Repeat("abcdefghij", int(width)/10+1)[:width-11]
	lines = (n + width - 1) / width
	return lines, bu.WriteLines(path, lines, func(b []byte, i int64) []byte {
		if *jsonLines {
			start := len(b)
			b = fmt.Appendf(b, `{"n":"%010d","level":"info","msg":"say \"hi\"","path":"c:\\api"}`, i)
			for int64(len(b)-start) < width-1 {
				b = append(b, ' ')
			}
			return b[:start+int(width)-1]
		}
		return fmt.Appendf(b, "%010d%s", i, filler)
	})
}

func runBaseline(dir, in string, size int64) (w, r float64) {
	mnt := filepath.Join(dir, "bmnt")
	backing := filepath.Join(dir, "backing")
	cmd := bu.Mount(mnt, *baselineBin, backing, mnt)
	defer func() { cmd.Stop(); os.Remove(backing) }()
	warmFree(dir, size)
	w = bu.MBps(size, bu.Sh("cat "+in+" >> "+mnt+"/file"))
	r = bu.MBps(size, bu.Sh("cat "+mnt+"/file > /dev/null"))
	return w, r
}

// warmFree is bu.WarmFree of the input's size plus an eighth (partfs's
// segments are about 7.5 % larger than the lines, and it writes indexes)
// in dir, unless -warm=false.
func warmFree(dir string, size int64) {
	if *warm {
		bu.WarmFree(dir, size+size/8)
	}
}

// mountPartfs mounts data on mnt with the partfs daemon, extra flags
// before the -batch-bytes one.
func mountPartfs(data, mnt string, extra ...string) *bu.Daemon {
	_ = os.MkdirAll(data, 0o755)
	args := append([]string{"mount", "--log-level", "warn"}, extra...)
	args = append(args, "--batch-bytes", strconv.Itoa(*batchBytes), data, mnt)
	return bu.Mount(mnt, append([]string{*bu.PartfsBin}, args...)...)
}

// partfsThroughput mounts a fresh data directory, appends the input to
// one log and reads it back as log and log.jsonl (MB/s each).
func partfsThroughput(dir, in string, size int64) (w, r, j float64) {
	mnt, data := filepath.Join(dir, "pmnt"), filepath.Join(dir, "data")
	_ = os.RemoveAll(data)
	cmd := mountPartfs(data, mnt)
	defer cmd.Stop()
	bu.Sh("mkdir " + mnt + "/t")
	log := mnt + "/t/0/log"
	warmFree(dir, size)
	w = bu.MBps(size, bu.Sh("cat "+in+" >> "+log))
	r = bu.MBps(size, bu.Sh("cat "+log+" > /dev/null"))
	// Timed like the other reads (into /dev/null, no pipe); the byte
	// count comes from a second, untimed read, checked against st_size.
	d := bu.Sh("cat " + log + ".jsonl > /dev/null")
	jsize := bu.ShInt("cat " + log + ".jsonl | wc -c")
	if st, err := os.Stat(log + ".jsonl"); err != nil || st.Size() != jsize {
		bu.Die(fmt.Errorf("log.jsonl: %d bytes read, stat says %v (%v)", jsize, st, err))
	}
	return w, r, bu.MBps(jsize, d)
}

// runPartfs measures latencies on the log the last throughput round
// wrote, then a clean remount and the idle RSS.
func runPartfs(dir, in string, size, lines int64) {
	mnt, data := filepath.Join(dir, "pmnt"), filepath.Join(dir, "data")
	cmd := mountPartfs(data, mnt)
	log := mnt + "/t/0/log"
	segmentsRead(mnt, data)
	headLatency(dir, in, lines)
	ddLatency(log, size)
	tailLatency(log)
	cmd.Stop()

	start := time.Now()
	cmd = mountPartfs(data, mnt)
	bu.Sh("stat " + log + " > /dev/null && tail -c " + fmt.Sprint(*lineBytes) + " " + log + " > /dev/null")
	fmt.Printf("%-44s %8.0f ms   (1 GiB-class log, clean shutdown before)\n", "partfs: clean remount to first tail -c", float64(time.Since(start).Milliseconds()))
	cmd.Stop()
	rereadLog(mnt, data)
	rssIdle(dir)
}

// headLatency measures `head -1 @offset/N` and `head -1 @time/T` for
// random N and T, each name looked up for the first time: open, one read
// of head's 8 KiB and close in this process (the filesystem's share), each
// sample beside the same on the go-fuse baseline's file (its name looked
// up at every open too), so both see the same load; then head -1 itself
// as a process, for reference. Every first line is checked.
func headLatency(dir, in string, lines int64) {
	bmnt := filepath.Join(dir, "hmnt")
	bd := bu.Mount(bmnt, *baselineBin, "-entry-timeout", "0", in, bmnt)
	defer bd.Stop()
	part := filepath.Join(dir, "pmnt", "t", "0")
	_, first := bu.FirstRecord(filepath.Join(part, "@offset", "0.jsonl"))
	_, last := bu.FirstRecord(filepath.Join(part, "@offset", strconv.FormatInt(lines-1, 10)+".jsonl"))
	rng := rand.New(rand.NewSource(1))
	var base, off, tm, offProc, tmProc, baseProc []time.Duration
	for i := 0; i < *samples; i++ {
		pos := rng.Int63n(lines) * int64(max(*lineBytes, 12))
		base = append(base, bu.FirstRead(filepath.Join(bmnt, "file"), pos, 8192, lineOf(pos/int64(max(*lineBytes, 12)))))
		n := rng.Int63n(lines)
		off = append(off, bu.FirstRead(filepath.Join(part, "@offset", strconv.FormatInt(n, 10)), 0, 8192, lineOf(n)))
		t := timeName(first+rng.Int63n(max(last-first, 1)), i)
		tm = append(tm, bu.FirstRead(filepath.Join(part, "@time", t), 0, 8192, timeLine(part, t)))

		n = rng.Int63n(lines)
		offProc = append(offProc, bu.HeadLine(filepath.Join(part, "@offset", strconv.FormatInt(n, 10)), lineOf(n)))
		t = timeName(first+rng.Int63n(max(last-first, 1)), i)
		tmProc = append(tmProc, bu.HeadLine(filepath.Join(part, "@time", t), timeLine(part, t)))
		baseProc = append(baseProc, bu.HeadLine(filepath.Join(bmnt, "file"), lineOf(0)))
	}
	b50, b95 := bu.Percentiles(base)
	fmt.Printf("%-44s p50 %.3f ms p95 %.3f ms\n", "baseline: open+read 8 KiB+close file", bu.MS(b50), bu.MS(b95))
	for _, f := range []struct {
		name string
		ds   []time.Duration
	}{{"partfs: open+read+close @offset/N", off}, {"partfs: open+read+close @time/T", tm}} {
		p50, p95 := bu.Percentiles(f.ds)
		fmt.Printf("%-44s p50 %.3f ms p95 %.3f ms  %.2fx / %.2fx of baseline (target p50 <= 0.5, p95 <= 1 ms)\n",
			f.name, bu.MS(p50), bu.MS(p95), float64(p50)/float64(b50), float64(p95)/float64(b95))
	}
	b50, _ = bu.Percentiles(baseProc)
	fmt.Printf("%-44s p50 %.2f ms\n", "baseline: head -1 file (process)", bu.MS(b50))
	for _, f := range []struct {
		name string
		ds   []time.Duration
	}{{"partfs: head -1 @offset/N (process)", offProc}, {"partfs: head -1 @time/T (process)", tmProc}} {
		p50, p95 := bu.Percentiles(f.ds)
		fmt.Printf("%-44s p50 %.2f ms p95 %.2f ms  %.2fx of baseline p50\n", f.name, bu.MS(p50), bu.MS(p95), float64(p50)/float64(b50))
	}
}

// lineOf is the check of a first line: it starts with input line n's
// number.
func lineOf(n int64) func() string {
	return func() string { return fmt.Sprintf("%010d", n) }
}

// timeLine is the check of @time/name's first line (checkTime), made
// after the timed read so that its lookups warm nothing the read needs.
func timeLine(part, name string) func() string {
	return func() string { return checkTime(part, name) }
}

// timeName names the time ts as @time/ takes it: epoch ms, or RFC 3339
// in UTC for odd i.
func timeName(ts int64, i int) string {
	if i%2 == 1 {
		return time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return strconv.FormatInt(ts, 10)
}

// checkTime finds (untimed) the first record of @time/name through its
// .jsonl twin and the record before it through @offset/: it must be the
// first with a timestamp at or after the name's time. It returns the
// record's plain line prefix.
func checkTime(part, name string) string {
	o, ts := bu.FirstRecord(filepath.Join(part, "@time", name+".jsonl"))
	want, err := strconv.ParseInt(name, 10, 64)
	if err != nil {
		t, perr := time.Parse(time.RFC3339Nano, name)
		if perr != nil {
			bu.Die(perr)
		}
		want = t.UnixMilli()
	}
	if ts < want {
		bu.Die(fmt.Errorf("@time/%s starts at offset %d of time %d", name, o, ts))
	}
	if o > 0 {
		if _, prev := bu.FirstRecord(filepath.Join(part, "@offset", strconv.FormatInt(o-1, 10)+".jsonl")); prev >= want {
			bu.Die(fmt.Errorf("@time/%s starts at offset %d, but %d has time %d", name, o, o-1, prev))
		}
	}
	return fmt.Sprintf("%010d", o)
}

// ddLatency: a 4 KiB read at a random position on a fresh open (like dd
// skip=P), near the start and near the end: latency independent of P.
func ddLatency(log string, size int64) {
	rng := rand.New(rand.NewSource(2))
	buf := make([]byte, 4096)
	measure := func(lo, hi int64) (time.Duration, time.Duration) {
		var ds []time.Duration
		for i := 0; i < *samples; i++ {
			p := lo + rng.Int63n(hi-lo)
			start := time.Now()
			f, err := os.Open(log)
			if err != nil {
				bu.Die(err)
			}
			if _, err := f.ReadAt(buf, p); err != nil {
				bu.Die(err)
			}
			f.Close()
			ds = append(ds, time.Since(start))
		}
		return bu.Percentiles(ds)
	}
	a50, a95 := measure(0, size/10)
	b50, b95 := measure(size*9/10, size-8192)
	fmt.Printf("%-44s first 10%%: p50 %.2f p95 %.2f ms; last 10%%: p50 %.2f p95 %.2f ms (ratio %.2f)\n",
		"partfs: dd skip=P (open+pread 4 KiB)", bu.MS(a50), bu.MS(a95), bu.MS(b50), bu.MS(b95), float64(b50)/float64(a50))
}

// tailLatency: time from an append returning to `tail -f` printing it.
func tailLatency(log string) {
	for _, m := range bu.TailModes {
		ds := bu.TailLatency(log, m.Args, 5, func(line string) time.Time {
			f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				bu.Die(err)
			}
			defer f.Close()
			start := time.Now()
			_, _ = f.WriteString(line + "\n")
			return start
		})
		var worst, sum time.Duration
		for _, d := range ds {
			worst, sum = max(worst, d), sum+d
		}
		fmt.Printf("%-44s mean %.0f ms, worst %.0f ms (target <= %s)\n", "partfs: tail "+strings.Join(m.Args, " ")+" latency",
			bu.MS(sum/time.Duration(len(ds))), bu.MS(worst), m.Target)
	}
}

// rssIdle mounts a fresh directory, creates partitions, touches each one,
// and reads the daemon's resident set size.
func rssIdle(dir string) {
	mnt, data := filepath.Join(dir, "rmnt"), filepath.Join(dir, "rdata")
	cmd := mountPartfs(data, mnt)
	defer cmd.Stop()
	bu.Sh(fmt.Sprintf("mkdir %s/t && for i in $(seq 1 %d); do mkdir %s/t/$i; done", mnt, *parts-1, mnt))
	bu.Sh(fmt.Sprintf("for i in $(seq 0 %d); do echo x >> %s/t/$i/log; stat %s/t/$i/log > /dev/null; done", *parts-1, mnt, mnt))
	time.Sleep(2 * time.Second)
	mb := cmd.RSSMB()
	fmt.Printf("%-44s %8.0f MB   %.2fx of the 200 MB budget\n", fmt.Sprintf("partfs: RSS, %d partitions idle", *parts), mb, mb/200)
}
