// Command scalebench measures partfs with many partitions and with
// line readers, each figure beside a reference measured in the same run:
//
//   - clean stop (SIGTERM to exit), clean start (to the last partition's
//     log answering stat) and start after SIGKILL of -topics x -per
//     partitions holding a record each, beside stopping and starting
//     go-fuse's loopback (bench/baseline -dir) over a directory of as
//     many empty files in the same layout, rounds alternating;
//   - the daemon's resident set size idle and after touching every
//     partition, against -rss-budget;
//   - the first line of @offset/N, @time/T and @key/K read by head -1,
//     Python's readline(), C stdio's fgets and Go's open+pread+close,
//     beside the same readers on the same bytes of a plain file through
//     the go-fuse baseline; and cat log, cat log.jsonl beside cat of
//     that file.
//
// PARTFS_BENCH_HUGE=1 (or -huge) adds a 100,000-partition run that
// mounts, creates, lists, appends and stops, printing the cost per
// partition beside the 10,000-partition run's. bench/scale.sh builds the
// binaries and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	bu "github.com/partfs/partfs/bench/internal/benchutil"
)

var (
	baselineBin = bu.BaselineFlag()
	topics      = flag.Int("topics", 100, "topics")
	perTopic    = flag.Int("per", 100, "partitions per topic")
	records     = flag.Int64("records", 1_500_000, "records of the line-reader partition (0: skip the line readers)")
	samples     = flag.Int("samples", 200, "lookups per line-reader figure")
	rssBudget   = flag.Float64("rss-budget", 0, "MiB the daemon may hold with the partitions open and touched (0: 40 KiB a partition plus 64 MiB)")
	huge        = flag.Bool("huge", os.Getenv("PARTFS_BENCH_HUGE") != "", "also run 100,000 partitions (PARTFS_BENCH_HUGE=1)")
	scaleOnly   = flag.Bool("scale-only", false, "skip the line readers")
)

func main() {
	flag.Parse()
	dir, cleanup := bu.WorkDir("scalebench")
	defer cleanup()
	fmt.Printf("load at start: %s", loadavg())
	n := *topics * *perTopic
	per := runScale(dir, *topics, *perTopic, bu.Rounds())
	if *huge {
		big := runHuge(filepath.Join(dir, "huge"))
		fmt.Printf("%-52s %8.1f us  %.2fx of %d partitions' %.1f us\n", "100,000 partitions: create+append+list+stop per partition",
			big, big/per, n, per)
	}
	if *records > 0 && !*scaleOnly {
		runReaders(dir, *records)
	}
	fmt.Printf("load at end: %s", loadavg())
}

// loadavg is the load averages, with a line end.
func loadavg() string { return bu.LoadAvg() + "\n" }

// mountPartfs mounts data on mnt with the partfs daemon.
func mountPartfs(data, mnt string) *bu.Daemon {
	_ = os.MkdirAll(data, 0o755)
	return bu.Mount(mnt, *bu.PartfsBin, "mount", "--log-level", "warn", data, mnt)
}

// lastLog is the log of the last partition of the layout.
func lastLog(mnt string, t, p int) string {
	return filepath.Join(mnt, topicName(t-1), fmt.Sprint(p-1), "log")
}

func topicName(i int) string { return fmt.Sprintf("t%03d", i) }

// started starts a mount with start() and waits until path answers
// stat; it returns the daemon and the time from start to that stat.
func started(start func() *bu.Daemon, path string) (*bu.Daemon, time.Duration) {
	t0 := time.Now()
	d := start()
	for i := 0; ; i++ {
		if _, err := os.Stat(path); err == nil {
			return d, time.Since(t0)
		} else if i > 60000 {
			bu.Die(fmt.Errorf("%s: %v after %s", path, err, time.Since(t0)))
		}
		time.Sleep(time.Millisecond)
	}
}

// stopped sends SIGTERM and returns how long the daemon took to exit.
func stopped(d *bu.Daemon) time.Duration {
	t0 := time.Now()
	d.Stop()
	return time.Since(t0)
}

// makeLayout creates t topics of p partitions through the mount and
// appends one record to each.
func makeLayout(mnt string, t, p int) {
	for i := 0; i < t; i++ {
		top := filepath.Join(mnt, topicName(i))
		must(os.Mkdir(top, 0o755))
		for j := 1; j < p; j++ {
			must(os.Mkdir(filepath.Join(top, fmt.Sprint(j)), 0o755))
		}
	}
	appendAll(mnt, t, p, "first")
}

// appendAll appends the line "word topic/partition" to every partition.
func appendAll(mnt string, t, p int, word string) { appendEvery(mnt, t, p, 1, word, nil) }

// appendEvery appends the line "word topic/partition" to every stride-th
// partition of each topic, adding it to want (by log path) when not nil.
func appendEvery(mnt string, t, p, stride int, word string, want map[string]string) {
	for i := 0; i < t; i++ {
		for j := 0; j < p; j += stride {
			if want != nil {
				want[filepath.Join(mnt, topicName(i), fmt.Sprint(j), "log")] += fmt.Sprintf("%s %d/%d\n", word, i, j)
			}
			f, err := os.OpenFile(filepath.Join(mnt, topicName(i), fmt.Sprint(j), "log"), os.O_WRONLY|os.O_APPEND, 0)
			must(err)
			_, err = fmt.Fprintf(f, "%s %d/%d\n", word, i, j)
			must(err)
			must(f.Close())
		}
	}
}

// listAll reads every topic directory and returns the partitions seen.
func listAll(mnt string, t int) int {
	n := 0
	for i := 0; i < t; i++ {
		es, err := os.ReadDir(filepath.Join(mnt, topicName(i)))
		must(err)
		for _, e := range es {
			if e.IsDir() {
				n++
			}
		}
	}
	return n
}

// statAll stats every partition's log and returns how long that took.
func statAll(mnt string, t, p int) time.Duration {
	t0 := time.Now()
	for i := 0; i < t; i++ {
		for j := 0; j < p; j++ {
			_, err := os.Stat(filepath.Join(mnt, topicName(i), fmt.Sprint(j), "log"))
			must(err)
		}
	}
	return time.Since(t0)
}

// checkAll reads every partition's log and checks it holds what want
// says (by log path).
func checkAll(mnt string, t, p int, want map[string]string) {
	for i := 0; i < t; i++ {
		for j := 0; j < p; j++ {
			path := filepath.Join(mnt, topicName(i), fmt.Sprint(j), "log")
			b, err := os.ReadFile(path)
			must(err)
			if string(b) != want[path] {
				bu.Die(fmt.Errorf("%s: %q, want %q", path, b, want[path]))
			}
		}
	}
}

// referenceTree makes t x p directories with an empty file each, the
// layout of the mount, under dir.
func referenceTree(dir string, t, p int) {
	for i := 0; i < t; i++ {
		for j := 0; j < p; j++ {
			d := filepath.Join(dir, topicName(i), fmt.Sprint(j))
			must(os.MkdirAll(d, 0o755))
			must(os.WriteFile(filepath.Join(d, "log"), nil, 0o644))
		}
	}
}

func must(err error) {
	if err != nil {
		bu.Die(err)
	}
}

// ratio formats a/b.
func ratio(a, b time.Duration) string {
	return fmt.Sprintf("%.2fx", float64(a)/float64(max(b, 1)))
}

// runScale measures stop, start and start after SIGKILL of t x p
// partitions, rounds times alternating with the reference tree, then
// the resident set size; it returns the cost per partition of creating,
// appending, listing and stopping them.
func runScale(dir string, t, p, rounds int) float64 {
	n := t * p
	data, mnt := filepath.Join(dir, "data"), filepath.Join(dir, "mnt")
	ref, rmnt := filepath.Join(dir, "ref"), filepath.Join(dir, "rmnt")
	referenceTree(ref, t, p)
	fmt.Printf("== %d topics x %d partitions = %d partitions, one record each\n", t, p, n)

	t0 := time.Now()
	d := mountPartfs(data, mnt)
	makeLayout(mnt, t, p)
	if got := listAll(mnt, t); got != n {
		bu.Die(fmt.Errorf("listed %d partitions, want %d", got, n))
	}
	setup := time.Since(t0)
	stop := stopped(d)
	perPart := float64((setup + stop).Microseconds()) / float64(n)
	fmt.Printf("%-52s %8.0f ms (%.1f us a partition); stop %.0f ms\n", "partfs: mount, create, append, list", bu.MS(setup), perPart, bu.MS(stop))

	want := map[string]string{}
	for i := 0; i < t; i++ { // what makeLayout wrote
		for j := 0; j < p; j++ {
			want[filepath.Join(mnt, topicName(i), fmt.Sprint(j), "log")] = fmt.Sprintf("first %d/%d\n", i, j)
		}
	}
	var refStop, refStart, refAll, pStop, pStart, pAll, pKill, pKillAll []float64
	for r := 0; r < rounds; r++ {
		rd, rs := started(func() *bu.Daemon { return bu.Mount(rmnt, *baselineBin, "-dir", ref, rmnt) }, lastLog(rmnt, t, p))
		ra := rs + statAll(rmnt, t, p)
		listAll(rmnt, t)
		rt := stopped(rd)

		// a clean start, a listing of every topic, a clean stop
		d, ps := started(func() *bu.Daemon { return mountPartfs(data, mnt) }, lastLog(mnt, t, p))
		pa := ps + statAll(mnt, t, p)
		if got := listAll(mnt, t); got != n {
			bu.Die(fmt.Errorf("listed %d partitions, want %d", got, n))
		}
		pt := stopped(d)
		// appends to every tenth partition, SIGKILL, a start that
		// recovers every partition, every log checked, a stop
		d = mountPartfs(data, mnt)
		appendEvery(mnt, t, p, 10, fmt.Sprintf("round%d", r), want)
		d.Kill()
		d, pk := started(func() *bu.Daemon { return mountPartfs(data, mnt) }, lastLog(mnt, t, p))
		pka := pk + statAll(mnt, t, p)
		checkAll(mnt, t, p, want)
		pr := stopped(d)
		fmt.Printf("round %d: reference stop %.0f start %.0f (every file %.0f) ms; partfs clean stop %.0f start %.0f (every log %.0f) start after SIGKILL %.0f (every log %.0f), stop after that recovery %.0f ms; load %s",
			r+1, bu.MS(rt), bu.MS(rs), bu.MS(ra), bu.MS(pt), bu.MS(ps), bu.MS(pa), bu.MS(pk), bu.MS(pka), bu.MS(pr), loadavg())
		refStop, refStart, refAll = append(refStop, bu.MS(rt)), append(refStart, bu.MS(rs)), append(refAll, bu.MS(ra))
		pStop, pStart, pAll = append(pStop, bu.MS(pt)), append(pStart, bu.MS(ps)), append(pAll, bu.MS(pa))
		pKill, pKillAll = append(pKill, bu.MS(pk)), append(pKillAll, bu.MS(pka))
	}
	rs, rst := bu.Median(refStop), bu.Median(refStart)
	fmt.Printf("medians of %d rounds:\n", rounds)
	fmt.Printf("%-52s %8.0f ms\n", fmt.Sprintf("reference: stop go-fuse loopback of %d empty files", n), rs)
	fmt.Printf("%-52s %8.0f ms\n", fmt.Sprintf("reference: start it to the last file's stat"), rst)
	rat := bu.Median(refAll)
	fmt.Printf("%-52s %8.0f ms\n", "reference: start it to every file's stat", rat)
	fmt.Printf("%-52s %8.0f ms  %.1fx of reference (goal <= 5000 ms)\n", "partfs: clean stop (SIGTERM to exit)", bu.Median(pStop), bu.Median(pStop)/rs)
	fmt.Printf("%-52s %8.0f ms  %.1fx of reference (goal <= 1000 ms)\n", "partfs: clean start to the last log's stat", bu.Median(pStart), bu.Median(pStart)/rst)
	fmt.Printf("%-52s %8.0f ms  %.1fx of reference (goal <= 1000 ms)\n", "partfs: clean start to every log's stat", bu.Median(pAll), bu.Median(pAll)/rat)
	fmt.Printf("%-52s %8.0f ms  %.1fx of reference (goal <= 5000 ms)\n", "partfs: start after SIGKILL to the last log's stat", bu.Median(pKill), bu.Median(pKill)/rst)
	fmt.Printf("%-52s %8.0f ms  %.1fx of reference (goal <= 5000 ms)\n", "partfs: start after SIGKILL to every log's stat", bu.Median(pKillAll), bu.Median(pKillAll)/rat)
	rssFigures(data, mnt, t, p)
	return perPart
}

// rssFigures mounts data and prints the daemon's resident set size idle
// and after reading every partition's log and log.jsonl, against the
// budget.
func rssFigures(data, mnt string, t, p int) {
	n := t * p
	budget := *rssBudget
	if budget == 0 {
		budget = 64 + float64(n)*40/1024
	}
	d, _ := started(func() *bu.Daemon { return mountPartfs(data, mnt) }, lastLog(mnt, t, p))
	defer d.Stop()
	time.Sleep(time.Second)
	idle := d.RSSMB()
	for i := 0; i < t; i++ {
		for j := 0; j < p; j++ {
			base := filepath.Join(mnt, topicName(i), fmt.Sprint(j), "log")
			_, err := os.ReadFile(base)
			must(err)
			_, err = os.ReadFile(base + ".jsonl")
			must(err)
		}
	}
	time.Sleep(time.Second)
	touched := d.RSSMB()
	verdict := "within"
	if touched > budget || idle > budget {
		verdict = "OVER"
	}
	fmt.Printf("%-52s %8.0f MiB idle, %.0f MiB after reading every log and log.jsonl: %s the %.0f MiB budget (%.1f KiB a partition touched)\n",
		fmt.Sprintf("partfs: RSS with %d partitions", n), idle, touched, verdict, budget, touched*1024/float64(n))
	if verdict == "OVER" {
		defer os.Exit(1)
	}
}

// runHuge creates 100,000 partitions (1,000 topics of 100), appends a
// record to each, lists and stops, and returns the cost per partition.
func runHuge(dir string) float64 {
	const t, p = 1000, 100
	data, mnt := filepath.Join(dir, "data"), filepath.Join(dir, "mnt")
	t0 := time.Now()
	d := mountPartfs(data, mnt)
	makeLayout(mnt, t, p)
	if got := listAll(mnt, t); got != t*p {
		bu.Die(fmt.Errorf("listed %d partitions, want %d", got, t*p))
	}
	setup := time.Since(t0)
	stop := stopped(d)
	d, start := started(func() *bu.Daemon { return mountPartfs(data, mnt) }, lastLog(mnt, t, p))
	stop2 := stopped(d)
	fmt.Printf("%-52s %8.0f ms create+append+list, stop %.0f ms, clean start %.0f ms, stop %.0f ms; load %s",
		"partfs: 100,000 partitions", bu.MS(setup), bu.MS(stop), bu.MS(start), bu.MS(stop2), loadavg())
	_ = os.RemoveAll(dir)
	return float64((setup + stop).Microseconds()) / float64(t*p)
}

// cc compiles the C reader into dir, or returns "" without a C compiler.
func cc(dir string) string {
	src, bin := filepath.Join(dir, "fgets.c"), filepath.Join(dir, "fgets")
	must(os.WriteFile(src, []byte(fgetsSource), 0o644))
	if out, err := exec.Command("cc", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		fmt.Printf("no C reader (cc: %v %s)\n", err, out)
		return ""
	}
	return bin
}
