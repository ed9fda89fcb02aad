package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bu "github.com/partfs/partfs/bench/internal/benchutil"
)

// pyReader times open + readline() + close for each "path pos" line on
// its input, Python's default buffered text I/O (its buffer sized from
// st_blksize), and prints the nanoseconds and the line's first 10 bytes.
const pyReader = `import sys, time
for req in sys.stdin:
    path, pos = req.rsplit(" ", 1)
    t = time.perf_counter_ns()
    f = open(path)
    if int(pos):
        f.seek(int(pos))
    line = f.readline()
    f.close()
    print(time.perf_counter_ns() - t, line[:10] or "-", flush=True)
`

// fgetsSource is the C stdio reader: fopen, fseek, fgets, fclose.
const fgetsSource = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static long long now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
int main(void) {
	char req[8192], line[65536];
	while (fgets(req, sizeof req, stdin)) {
		char *sp = strrchr(req, ' ');
		long pos;
		if (!sp) return 2;
		*sp = 0; pos = atol(sp + 1);
		long long t = now();
		FILE *f = fopen(req, "r");
		if (!f) { perror(req); return 1; }
		if (pos) fseek(f, pos, SEEK_SET);
		if (!fgets(line, sizeof line, f)) strcpy(line, "-");
		fclose(f);
		printf("%lld %.10s\n", now() - t, line);
		fflush(stdout);
	}
	return 0;
}
`

// A coproc is a reader process fed one request a line.
type coproc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startCoproc(args ...string) *coproc {
	cmd := exec.Command(args[0], args[1:]...)
	in, err := cmd.StdinPipe()
	must(err)
	out, err := cmd.StdoutPipe()
	must(err)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	return &coproc{cmd, in, bufio.NewReader(out)}
}

// read asks for the first line of path at pos and returns the time the
// reader measured; the line must start with want.
func (c *coproc) read(path string, pos int64, want string) time.Duration {
	_, err := fmt.Fprintf(c.in, "%s %d\n", path, pos)
	must(err)
	reply, err := c.out.ReadString('\n')
	must(err)
	ns, line, _ := strings.Cut(strings.TrimSuffix(reply, "\n"), " ")
	if !strings.HasPrefix(line, want[:min(len(want), 10)]) {
		bu.Die(fmt.Errorf("%s at %d: %q, want %q", path, pos, line, want))
	}
	d, err := strconv.ParseInt(ns, 10, 64)
	must(err)
	return time.Duration(d)
}

func (c *coproc) stop() { c.in.Close(); _ = c.cmd.Wait() }

const lineBytes = 120

// numbered is input line i without its newline.
func numbered(b []byte, i int64) []byte {
	return append(fmt.Appendf(b, "%010d", i), strings.Repeat("x", lineBytes-11)...)
}

// runReaders writes n records with cat FILE >> log, then measures each
// line reader's first line of @offset/N, @time/T and @key/K beside the
// same reader on the same bytes of the input through the go-fuse
// baseline, and cat log, cat log.jsonl beside cat of the baseline's file.
func runReaders(dir string, n int64) {
	in := filepath.Join(dir, "input.txt")
	size := bu.WriteLines(in, n, numbered)
	data, mnt := filepath.Join(dir, "rdata"), filepath.Join(dir, "rdmnt")
	d := mountPartfs(data, mnt)
	defer d.Stop()
	part := filepath.Join(mnt, "lines", "0")
	must(os.Mkdir(filepath.Join(mnt, "lines"), 0o755))
	bu.Sh("cat " + in + " >> " + filepath.Join(part, "log"))
	const keys = 100
	for k := 0; k < keys; k++ {
		must(os.WriteFile(filepath.Join(part, "@key", fmt.Sprintf("k%d", k)), numbered(nil, int64(k)), 0o644))
	}
	bmnt := filepath.Join(dir, "bmnt")
	bd := bu.Mount(bmnt, *baselineBin, "-entry-timeout", "0", in, bmnt)
	defer bd.Stop()
	file := filepath.Join(bmnt, "file")
	fmt.Printf("== line readers: %d records of %d bytes written by cat FILE >> log, %d keyed records; load %s", n, lineBytes, keys, loadavg())

	_, first := bu.FirstRecord(filepath.Join(part, "@offset", "0.jsonl"))
	_, last := bu.FirstRecord(filepath.Join(part, "@offset", fmt.Sprint(n-1)+".jsonl"))
	py := startCoproc("python3", "-c", pyReader)
	defer py.stop()
	var c *coproc
	if bin := cc(dir); bin != "" {
		c = startCoproc(bin)
		defer c.stop()
	}
	type row struct{ base, off, tm, key []time.Duration }
	rows := map[string]*row{}
	names := []string{"head -1 (process)", "Python readline()", "C stdio fgets", "Go open+pread 120 B+close"}
	for _, nm := range names {
		rows[nm] = &row{}
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < *samples; i++ {
		o := rng.Int63n(n)
		want := string(numbered(nil, o)[:10])
		offPath := filepath.Join(part, "@offset", fmt.Sprint(o))
		ts := first + rng.Int63n(max(last-first, 1))
		timePath := filepath.Join(part, "@time", fmt.Sprint(ts))
		tOff, _ := bu.FirstRecord(timePath + ".jsonl")
		tWant := string(numbered(nil, tOff)[:10])
		k := rng.Intn(keys)
		keyPath := filepath.Join(part, "@key", fmt.Sprintf("k%d", k))
		kWant := string(numbered(nil, int64(k))[:10])
		pos := o * lineBytes
		readers := map[string]func(path string, pos int64, want string) time.Duration{
			names[0]: func(p string, _ int64, w string) time.Duration { return bu.HeadLine(p, func() string { return w }) },
			names[1]: py.read,
			names[3]: func(p string, pos int64, w string) time.Duration {
				return bu.FirstRead(p, pos, lineBytes, func() string { return w })
			},
		}
		if c != nil {
			readers[names[2]] = c.read
		}
		for nm, read := range readers {
			r := rows[nm]
			if nm == names[0] {
				r.base = append(r.base, read(file, 0, "0000000000"))
			} else {
				r.base = append(r.base, read(file, pos, want))
			}
			r.off = append(r.off, read(offPath, 0, want))
			r.tm = append(r.tm, read(timePath, 0, tWant))
			r.key = append(r.key, read(keyPath, 0, kWant))
		}
	}
	fmt.Printf("first line, p50 / p95 in ms over %d samples (reference: the same reader on the same bytes of a file through the go-fuse baseline; head -1 reads its first line):\n", *samples)
	for _, nm := range names {
		r := rows[nm]
		if len(r.base) == 0 {
			continue
		}
		b50, b95 := bu.Percentiles(r.base)
		line := fmt.Sprintf("  %-28s reference %.3f/%.3f", nm, bu.MS(b50), bu.MS(b95))
		for _, v := range []struct {
			name string
			ds   []time.Duration
		}{{"@offset/N", r.off}, {"@time/T", r.tm}, {"@key/K", r.key}} {
			p50, p95 := bu.Percentiles(v.ds)
			line += fmt.Sprintf("; %s %.3f/%.3f (%.2fx)", v.name, bu.MS(p50), bu.MS(p95), float64(p50)/float64(b50))
		}
		fmt.Println(line)
	}
	catFigures(part, file, size)
}

// catFigures times cat of log and log.jsonl beside cat of the baseline's
// file, three rounds alternating, and prints the medians and ratios.
func catFigures(part, file string, size int64) {
	var b, l, j []float64
	jsize := int64(0)
	for i := 0; i < 3; i++ {
		b = append(b, bu.MBps(size, bu.Sh("cat "+file+" > /dev/null")))
		l = append(l, bu.MBps(size, bu.Sh("cat "+filepath.Join(part, "log")+" > /dev/null")))
		dj := bu.Sh("cat " + filepath.Join(part, "log.jsonl") + " > /dev/null")
		if jsize == 0 {
			jsize = bu.FileSize(filepath.Join(part, "log.jsonl"))
		}
		j = append(j, bu.MBps(jsize, dj))
	}
	mb := bu.Median(b)
	fmt.Printf("  cat: baseline file %.0f MB/s; log %.0f MB/s (%.2fx); log.jsonl %.0f MB/s (%.2fx); load %s",
		mb, bu.Median(l), bu.Median(l)/mb, bu.Median(j), bu.Median(j)/mb, loadavg())
}
