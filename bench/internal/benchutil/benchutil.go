// Package benchutil holds what the bench programs share: the common flags
// (-partfs, -work, -rounds; -baseline where asked), failing with a message, a work directory,
// input files of numbered lines, timed commands and shell scripts, a mount
// daemon started and awaited, medians and percentiles, the tail -f latency
// probe and a daemon's resident set size.
package benchutil

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The flags every bench program takes.
var (
	PartfsBin = flag.String("partfs", "bin/partfs", "partfs binary")
	work      = flag.String("work", "", "work directory (default: a new temp dir)")
	rounds    = flag.Int("rounds", 3, "throughput rounds, the baseline and partfs alternately (medians reported)")
)

// BaselineFlag declares -baseline, the go-fuse baseline's binary
// (bench/baseline), for the programs that measure beside it.
func BaselineFlag() *string {
	return flag.String("baseline", "bin/fsbench-baseline", "baseline binary (bench/baseline)")
}

// Rounds is -rounds, at least 1.
func Rounds() int { return max(*rounds, 1) }

// Die prints err after the program's name and exits with status 1.
func Die(err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
	os.Exit(1)
}

// WorkDir returns -work, or a new temporary directory named after prefix
// when -work is empty, and the function that removes what it created.
func WorkDir(prefix string) (string, func()) {
	if dir := *work; dir != "" {
		return dir, func() {}
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		Die(err)
	}
	return dir, func() { os.RemoveAll(dir) }
}

// WriteLines writes n lines to a new file at path, line i as line
// appends it (without its newline) to a buffer, and returns the file's
// size.
func WriteLines(path string, n int64, line func(b []byte, i int64) []byte) int64 {
	f, err := os.Create(path)
	if err != nil {
		Die(err)
	}
	var size int64
	b := make([]byte, 0, 1<<20)
	for i := int64(0); i < n; i++ {
		b = append(line(b, i), '\n')
		if i == n-1 || len(b) >= 1<<20-4096 {
			if _, err := f.Write(b); err != nil {
				Die(err)
			}
			size, b = size+int64(len(b)), b[:0]
		}
	}
	if err := f.Close(); err != nil {
		Die(err)
	}
	return size
}

// FileSize is the size of the file at path.
func FileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		Die(err)
	}
	return st.Size()
}

// Sh runs script with bash (errexit, pipefail) and returns how long it
// took; a failure ends the program with the script's output.
func Sh(script string) time.Duration {
	start := time.Now()
	if out, err := exec.Command("bash", "-c", "set -eo pipefail; "+script).CombinedOutput(); err != nil {
		Die(fmt.Errorf("%s: %v\n%s", script, err, out))
	}
	return time.Since(start)
}

// Run runs the command args and returns its output and how long it took;
// a failure ends the program.
func Run(args ...string) (string, time.Duration) {
	start := time.Now()
	out, err := exec.Command(args[0], args[1:]...).Output()
	d := time.Since(start)
	if err != nil {
		Die(fmt.Errorf("%s: %v", strings.Join(args, " "), err))
	}
	return string(out), d
}

// HeadLine runs head -1 path, checks that its line starts with want()
// (asked after it ran) and returns how long the process took.
func HeadLine(path string, want func() string) time.Duration {
	out, d := Run("head", "-1", path)
	if w := want(); !strings.HasPrefix(out, w) {
		Die(fmt.Errorf("head -1 %s = %q, want %q", path, out, w))
	}
	return d
}

// FirstRead opens path, reads n bytes at pos (a reader's first read) and
// closes it, in this process; it checks that the bytes start with want()
// (asked after the read) and returns how long the three calls took.
func FirstRead(path string, pos int64, n int, want func() string) time.Duration {
	buf := make([]byte, n)
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		Die(err)
	}
	k, err := f.ReadAt(buf, pos)
	f.Close()
	d := time.Since(start)
	if w := want(); k == 0 || !strings.HasPrefix(string(buf[:k]), w) {
		Die(fmt.Errorf("read of %s at %d: %q, %v (want %q)", path, pos, buf[:min(k, 40)], err, w))
	}
	return d
}

// FirstRecord returns the offset and timestamp of the first line of a
// .jsonl view.
func FirstRecord(path string) (offset, ts int64) {
	f, err := os.Open(path)
	if err != nil {
		Die(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	var r struct{ Offset, Timestamp int64 }
	if err != nil || json.Unmarshal([]byte(line), &r) != nil {
		Die(fmt.Errorf("first line of %s: %q, %v", path, line, err))
	}
	return r.Offset, r.Timestamp
}

// ShInt runs script with bash and returns its output as an integer.
func ShInt(script string) int64 {
	out, err := exec.Command("bash", "-c", "set -eo pipefail; "+script).Output()
	if err != nil {
		Die(fmt.Errorf("%s: %v", script, err))
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		Die(fmt.Errorf("%s: %q is not a number", script, out))
	}
	return n
}

// MBps is n bytes in d as MB/s.
func MBps(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() / 1e6 }

// MS is d in milliseconds.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Median is the middle of v (the mean of the two middle values when v
// has an even length).
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Percentiles sorts ds and returns its 50th and 95th percentiles.
func Percentiles(ds []time.Duration) (p50, p95 time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*95/100]
}

// A Daemon is a mount daemon started by Mount.
type Daemon struct{ cmd *exec.Cmd }

// Mount creates mnt, starts the command args and waits up to 30 s for a
// FUSE mount on mnt.
func Mount(mnt string, args ...string) *Daemon {
	_ = os.MkdirAll(mnt, 0o755)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		Die(err)
	}
	for i := 0; i < 600; i++ {
		if b, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(b), " "+mnt+" fuse") {
			return &Daemon{cmd}
		}
		time.Sleep(50 * time.Millisecond)
	}
	Die(fmt.Errorf("%s did not mount in 30 s", mnt))
	return nil
}

// Stop stops the daemon with SIGTERM and waits for it to exit.
func (d *Daemon) Stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
}

// Kill kills the daemon with SIGKILL and waits for it to exit; the mount
// is then detached (umount -l), as after a crash.
func (d *Daemon) Kill() {
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	if mnt := d.cmd.Args[len(d.cmd.Args)-1]; mnt != "" {
		_ = exec.Command("umount", "-l", mnt).Run()
	}
}

// RSSMB returns the daemon's resident set size in MB (MiB).
func (d *Daemon) RSSMB() float64 {
	pid := d.cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		Die(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return float64(kb) / 1024
		}
	}
	Die(fmt.Errorf("no VmRSS in /proc/%d/status", pid))
	return 0
}

// CPU returns the processor time (user and system) the daemon has used.
func (d *Daemon) CPU() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.cmd.Process.Pid))
	if err != nil {
		Die(err)
	}
	// the fields after the command's parenthesis: utime and stime are
	// the 12th and 13th, in clock ticks (USER_HZ, 100 on Linux)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// SelfCPU returns the processor time this process has used.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TailModes are the two ways the benchmarks run tail -f: at its default
// 1 s interval and at -s 0.1, each with its latency target.
var TailModes = []struct {
	Args   []string
	Target string
}{{[]string{"-f"}, "1.1 s"}, {[]string{"-s", "0.1", "-f"}, "150 ms"}}

// TailLatency runs `tail -n 0 args path`, then n times hands a new line
// to emit, which makes it appear at the end of path and returns the
// instant the clock starts; it returns for each line the time until
// tail printed it.
func TailLatency(path string, args []string, n int, emit func(line string) time.Time) []time.Duration {
	cmd := exec.Command("tail", append(append([]string{"-n", "0"}, args...), path)...)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		Die(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r := bufio.NewReader(out)
	time.Sleep(1500 * time.Millisecond)
	var ds []time.Duration
	for i := 0; i < n; i++ {
		line := fmt.Sprintf("tail-probe-%d-%d", i, time.Now().UnixNano())
		start := emit(line)
		for {
			s, err := r.ReadString('\n')
			if err != nil {
				Die(err)
			}
			if strings.TrimSpace(s) == line {
				break
			}
		}
		ds = append(ds, time.Since(start))
		time.Sleep(time.Duration(rand.Intn(700)) * time.Millisecond)
	}
	return ds
}

// WarmFree writes n bytes to a scratch file in dir and removes it, so
// that the next n bytes written to dir's filesystem land in pages the
// host backs already. On a VM whose host backs guest memory lazily and
// takes freed pages back (virtio_balloon free page reporting, about 2 s
// after a free), a write into never-touched tmpfs pages runs at a
// fraction of the speed of one into pages just freed; calling this just
// before each timed write, on every side, makes them all start alike.
func WarmFree(dir string, n int64) {
	f, err := os.CreateTemp(dir, ".warm-")
	if err != nil {
		Die(err)
	}
	defer os.Remove(f.Name())
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i) | 1
	}
	for left := n; left > 0; left -= int64(len(b)) {
		if _, err := f.Write(b[:min(left, int64(len(b)))]); err != nil {
			Die(err)
		}
	}
	if err := f.Close(); err != nil {
		Die(err)
	}
}

// LoadAvg is the 1, 5 and 15 minute load averages of /proc/loadavg.
func LoadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
