// Command kafkabench measures partfs mounting a Kafka cluster against kcat
// on the same in-process cluster (franz-go's kfake) in the same run, and
// prints each figure with its ratio to kcat or to the target: cat of a
// partition against kcat -C, cat >> log against kcat -P -l, lookups of
// @offset/N and @time/T, tail -f latency, and the daemon's RSS serving
// many partitions. bench/kafka.sh builds partfs and runs it; it needs
// root, /dev/fuse and kcat.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bu "github.com/partfs/partfs/bench/internal/benchutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	records   = flag.Int("records", 1000000, "records per topic")
	lineBytes = flag.Int("line", 120, "bytes per record line, newline included")
	lookups   = flag.Int("lookups", 200, "random lookups per latency figure")
	parts     = flag.Int("partitions", 1000, "partitions for the RSS figure")
	profile   = flag.String("cpuprofile", "", "write the CPU profile of the daemon of the main mount to this file")
	only      = flag.String("only", "", `"lookups": only the lookup figures (the topic produced by kcat, untimed)`)
)

func main() {
	flag.Parse()
	dir, cleanup := bu.WorkDir("kafkabench")
	defer cleanup()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		bu.Die(err)
	}
	defer c.Close()
	addr := strings.Join(c.ListenAddrs(), ",")
	in := filepath.Join(dir, "input.txt")
	size := genInput(in)
	fmt.Printf("input: %d records of %d bytes (newline included), %.0f MB; cluster %s (kfake, in process)\n", *records, *lineBytes, float64(size)/1e6, addr)
	mnt := filepath.Join(dir, "mnt")
	d := mount(mnt, addr, filepath.Join(dir, "cache"))
	if *only == "lookups" {
		bu.Sh(fmt.Sprintf("mkdir %s/kc1 && kcat -b %s -P -t kc1 -p 0 -l %s", mnt, addr, in))
		d.Stop()
		d = mount(mnt, addr, filepath.Join(dir, "cache2"))
		lookupLatency(addr, mnt, "kc1", "fresh mount")
		bu.Sh(fmt.Sprintf("cat %s/kc1/0/log > /dev/null", mnt))
		lookupLatency(addr, mnt, "kc1", "log read")
		d.Stop()
		return
	}
	throughput(addr, mnt, in, size)
	lookupLatency(addr, mnt, "kc1", "log read")
	d.Stop()
	d = mount(mnt, addr, filepath.Join(dir, "cache2"))
	lookupLatency(addr, mnt, "kc1", "fresh mount")
	tailLatency(addr, mnt, "kc1")
	d.Stop()
	rss(addr, dir)
}

// genInput writes -records lines of -line bytes and returns the size.
func genInput(path string) int64 {
	pad := strings.Repeat("x", max(*lineBytes-12, 0))
	return bu.WriteLines(path, int64(*records), func(b []byte, i int64) []byte {
		return fmt.Appendf(b, "%010d %s", i, pad)
	})
}

// mount starts `partfs mount --kafka` and waits until it answers.
func mount(mnt, addr, cache string) *bu.Daemon {
	args := []string{"mount", "--log-level", "warn", "--kafka", addr, "--cache-dir", cache}
	if *profile != "" && !strings.HasSuffix(mnt, "rmnt") {
		args = append(args, "--cpuprofile", *profile)
	}
	return bu.Mount(mnt, append(append([]string{*bu.PartfsBin}, args...), mnt)...)
}

// throughput alternates kcat and partfs in each round: produce the input
// (kcat -P -l into kcN, cat >> log into kpN), then consume kcN whole
// (kcat -C -e against cat log).
func throughput(addr, mnt, in string, size int64) {
	var kw, pw, kr, pr, rw, rr []float64
	for i := 1; i <= bu.Rounds(); i++ {
		kc, kp := fmt.Sprint("kc", i), fmt.Sprint("kp", i)
		bu.Sh(fmt.Sprintf("mkdir %s/%s %s/%s", mnt, kc, mnt, kp))
		w1 := bu.MBps(size, bu.Sh(fmt.Sprintf("kcat -b %s -P -t %s -p 0 -l %s", addr, kc, in)))
		w2 := bu.MBps(size, bu.Sh(fmt.Sprintf("cat %s >> %s/%s/0/log", in, mnt, kp)))
		r1 := bu.MBps(size, bu.Sh(fmt.Sprintf("kcat -b %s -C -t %s -p 0 -e -q -f '%%s\\n' > /dev/null", addr, kc)))
		r2 := bu.MBps(size, bu.Sh(fmt.Sprintf("cat %s/%s/0/log > /dev/null", mnt, kc)))
		kw, pw, kr, pr = append(kw, w1), append(pw, w2), append(kr, r1), append(pr, r2)
		rw, rr = append(rw, w2/w1), append(rr, r2/r1)
		fmt.Printf("round %d: kcat -P %.0f, cat >> log %.0f MB/s (%.2fx); kcat -C %.0f, cat log %.0f MB/s (%.2fx)\n", i, w1, w2, w2/w1, r1, r2, r2/r1)
	}
	check(fmt.Sprintf("wc -l < %s/kp1/0/log", mnt), *records)
	check(fmt.Sprintf("wc -l < %s/kc1/0/log", mnt), *records)
	fmt.Printf("medians of %d rounds (ratio: median of the rounds' ratios):\n", len(kw))
	fmt.Printf("%-46s %8.0f MB/s\n", "kcat -P -l FILE", bu.Median(kw))
	fmt.Printf("%-46s %8.0f MB/s  %.2fx of kcat (target >= 1.0x)\n", "partfs: cat FILE >> log", bu.Median(pw), bu.Median(rw))
	fmt.Printf("%-46s %8.0f MB/s\n", "kcat -C -e -q -f '%s\\n'", bu.Median(kr))
	fmt.Printf("%-46s %8.0f MB/s  %.2fx of kcat (target >= 1.0x)\n", "partfs: cat log > /dev/null", bu.Median(pr), bu.Median(rr))
}

func check(script string, want int) {
	if n := bu.ShInt(script); n != int64(want) {
		bu.Die(fmt.Errorf("%s: %d, want %d", script, n, want))
	}
}

// firstLine opens path, reads its first line and closes it, as head -1
// does, and returns how long that took.
func firstLine(path string, want string) time.Duration {
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		bu.Die(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	d := time.Since(start)
	if err != nil || !strings.HasPrefix(line, want) {
		bu.Die(fmt.Errorf("first line of %s: %q, %v (want %q)", path, line, err, want))
	}
	return d
}

var lookupRounds int64

// lookupLatency: the first line of @offset/N and @time/T for random N and
// T (each a lookup, an open and a read) of a partition, on a fresh mount
// (nothing of it placed: each lookup reads its tile up to N) or after
// its log was read whole.
//
// Baselines of the same run, interleaved with the lookups: head -1 of log
// (an open and a read of the mount that looks nothing up) and, for every
// fourth N and T, kcat -o N -c 1 and kcat -o s@T -c 1 (what a user
// would run instead; a process and a connection each).
func lookupLatency(addr, mnt, topic, state string) {
	part := filepath.Join(mnt, topic, "0")
	lookupRounds++ // names not looked up before
	rng := rand.New(rand.NewSource(lookupRounds))
	var off, tm, head, kOff, kTm []time.Duration
	first, last := timestamps(part)
	kcat := func(o string) time.Duration {
		return bu.Sh(fmt.Sprintf("kcat -b %s -C -t %s -p 0 -o %s -c 1 -e -q > /dev/null", addr, topic, o))
	}
	for i := 0; i < *lookups; i++ {
		n := rng.Int63n(int64(*records))
		off = append(off, firstLine(filepath.Join(part, "@offset", strconv.FormatInt(n, 10)), fmt.Sprintf("%010d", n)))
		ts := first + rng.Int63n(max(last-first, 1))
		tm = append(tm, firstLine(filepath.Join(part, "@time", strconv.FormatInt(ts, 10)+".jsonl"), `{"offset":`))
		head = append(head, firstLine(filepath.Join(part, "log"), ""))
		if i%4 == 0 {
			kOff, kTm = append(kOff, kcat(strconv.FormatInt(n, 10))), append(kTm, kcat("s@"+strconv.FormatInt(ts, 10)))
		}
	}
	load := bu.LoadAvg()
	h50, _ := bu.Percentiles(head)
	fmt.Printf("%-46s p50 %.2f ms (baseline, load %s)\n", "partfs: head -1 log", bu.MS(h50), load)
	for _, f := range []struct {
		name     string
		ds, kcat []time.Duration
		kcatName string
	}{
		{"@offset/N", off, kOff, "kcat -o N -c 1"},
		{"@time/T.jsonl", tm, kTm, "kcat -o s@T -c 1"},
	} {
		k50, _ := bu.Percentiles(f.kcat)
		fmt.Printf("%-46s p50 %.2f ms (baseline, %d runs)\n", f.kcatName, bu.MS(k50), len(f.kcat))
		p50, p95 := bu.Percentiles(f.ds)
		fmt.Printf("%-46s p50 %.2f ms p95 %.2f ms (target p50 <= 5 ms); %.2fx head -1 log, %.2fx kcat; load %s\n",
			fmt.Sprintf("partfs: head -1 %s (%d records, %s)", f.name, *records, state), bu.MS(p50), bu.MS(p95),
			bu.MS(p50)/bu.MS(h50), bu.MS(p50)/bu.MS(k50), load)
	}
}

// timestamps returns the first and the largest record timestamp of part.
func timestamps(part string) (int64, int64) {
	b, err := os.ReadFile(filepath.Join(part, "stat"))
	if err != nil {
		bu.Die(err)
	}
	var first, last int64
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "first_timestamp_ms":
			first = n
		case "max_timestamp_ms":
			last = n
		}
	}
	return first, last
}

// tailLatency: from a record acknowledged to another producer (franz-go)
// to `tail -f` on the mount printing it, at tail's default 1 s interval
// and at -s 0.1.
func tailLatency(addr, mnt, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		bu.Die(err)
	}
	defer cl.Close()
	for _, m := range bu.TailModes {
		ds := bu.TailLatency(filepath.Join(mnt, topic, "0", "log"), m.Args, 7, func(line string) time.Time {
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(line)}).FirstErr(); err != nil {
				bu.Die(err)
			}
			return time.Now()
		})
		p50, _ := bu.Percentiles(ds)
		fmt.Printf("%-46s p50 %.0f ms, worst %.0f ms (target <= %s)\n", "partfs: tail "+strings.Join(m.Args, " ")+" latency", bu.MS(p50), float64(ds[len(ds)-1].Milliseconds()), m.Target)
	}
}

// rss: a fresh mount of a topic with -partitions partitions, one record
// each, every partition's stat and log read; then the daemon's RSS.
func rss(addr, dir string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		bu.Die(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, int32(*parts), 1, nil, "many"); err != nil {
		bu.Die(err)
	}
	var recs []*kgo.Record
	for p := 0; p < *parts; p++ {
		recs = append(recs, &kgo.Record{Topic: "many", Partition: int32(p), Value: []byte("x")})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		bu.Die(err)
	}
	mnt := filepath.Join(dir, "rmnt")
	cmd := mount(mnt, addr, filepath.Join(dir, "rcache"))
	defer cmd.Stop()
	bu.Sh(fmt.Sprintf("for i in $(seq 0 %d); do cat %s/many/$i/stat %s/many/$i/log > /dev/null; done", *parts-1, mnt, mnt))
	time.Sleep(2 * time.Second)
	mb := cmd.RSSMB()
	fmt.Printf("%-46s %8.0f MB   %.2fx of the 300 MB budget\n", fmt.Sprintf("partfs: RSS, %d partitions read", *parts), mb, mb/300)
}
