package systest

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// hostileOp is one operation through the mount and the errnos docs/spec.md §8
// allows for it (none: it must succeed).
type hostileOp struct {
	name string
	do   func() error
	want []syscall.Errno
}

func (op hostileOp) run(t *testing.T) {
	t.Helper()
	err := op.do()
	got := testutil.Errno(err)
	if got == testutil.NotErrno {
		t.Errorf("%s: %v (no errno)", op.name, err)
		return
	}
	if len(op.want) == 0 {
		if err != nil {
			t.Errorf("%s: %v, want success", op.name, err)
		}
		return
	}
	for _, w := range op.want {
		if got == w {
			return
		}
	}
	t.Errorf("%s: got %v (%d), want %v", op.name, err, got, op.want)
}

func stat(path string) func() error { return func() error { _, err := os.Stat(path); return err } }

func writeTo(path string, flag int, data []byte) func() error {
	return func() error {
		f, err := os.OpenFile(path, flag, 0o644)
		if err != nil {
			return err
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr != nil {
			return werr
		}
		return cerr
	}
}

func appendTo(path string, data []byte) func() error {
	return writeTo(path, os.O_WRONLY|os.O_APPEND, data)
}

var (
	eNOENT = []syscall.Errno{syscall.ENOENT}
	eINVAL = []syscall.Errno{syscall.EINVAL}
	ePERM  = []syscall.Errno{syscall.EPERM}
	eFBIG  = []syscall.Errno{syscall.EFBIG}
	eEXIST = []syscall.Errno{syscall.EEXIST}
)

// pathOps: every path form of docs/spec.md §2 on partition h/0 holding 100 records.
func pathOps(d *daemon) []hostileOp {
	p := func(s string) string { return d.mnt + "/h/0/" + s } // not cleaned: ".." stays
	var ops []hostileOp
	for _, ok := range []string{"@offset/0", "@offset/50", "@offset/100", "@offset/earliest", "@offset/latest",
		"@offset/0.jsonl", "@offset/latest.jsonl", "@offset/0..100", "@offset/10..20.jsonl", "@offset/earliest..latest",
		"@time/0", "@time/2026-11-29T10:00:00Z", "@time/2026-11-29T10:00:00.5+01:00", "@time/-10m", "@time/-1h30m",
		"@time/-2d", "@time/earliest", "@time/latest", "@time/max", "@time/0..latest", "@time/max.jsonl",
		"@key/k1", "segments", "stat", "log", "log.jsonl"} {
		ops = append(ops, hostileOp{"stat " + ok, stat(p(ok)), nil})
	}
	for _, bad := range []struct {
		path string
		want []syscall.Errno
	}{
		{"@offset/102", eNOENT}, {"@offset/0..102", eNOENT}, {"@offset/abc", eINVAL}, {"@offset/1e3", eINVAL},
		{"@offset/99999999999999999999999", eINVAL}, {"@offset/--1", eINVAL}, {"@offset/...", eINVAL}, {"@offset/3..2", eINVAL},
		{"@offset/5..", eINVAL}, {"@time/yesterday", eINVAL}, {"@time/2026-13-45T99:00:00Z", eINVAL},
		{"@time/-10x", eINVAL}, {"@time/0..bogus", eINVAL}, {"@key/absent", eNOENT}, {"nope", eNOENT},
		{"@offset/" + strings.Repeat("9", 250), eINVAL},
	} {
		ops = append(ops, hostileOp{"stat " + bad.path, stat(p(bad.path)), bad.want})
	}
	ops = append(ops,
		hostileOp{"stat unknown topic", stat(d.path("nope")), eNOENT},
		hostileOp{"stat unknown partition", stat(d.path("h", "7")), eNOENT},
		hostileOp{"stat partition x", stat(d.path("h", "x")), []syscall.Errno{syscall.ENOENT, syscall.EINVAL}},
	)
	return ops
}

// writeOps: refused writes, config lines and JSON lines of docs/spec.md §4, §6, §8.
func writeOps(d *daemon, rng *rand.Rand) []hostileOp {
	p := func(s string) string { return d.path("h", "0", s) }
	cfg := d.path("h", "config")
	ops := []hostileOp{
		{"write @offset/0", writeTo(p("@offset/0"), os.O_WRONLY, []byte("x\n")), ePERM},
		{"write stat", writeTo(p("stat"), os.O_WRONLY, []byte("x\n")), ePERM},
		{"> log (O_TRUNC)", writeTo(p("log"), os.O_WRONLY|os.O_TRUNC, []byte("x\n")), ePERM},
		{"truncate log", func() error { return os.Truncate(p("log"), 0) }, ePERM},
		{"rm log", func() error { return os.Remove(p("log")) }, ePERM},
		{"rm log.jsonl", func() error { return os.Remove(p("log.jsonl")) }, ePERM},
		{"rmdir partition", func() error { return syscall.Rmdir(d.path("h", "0")) }, ePERM},
		{"write a segment file", writeTo(p("segments/00000000000000000000.log"), os.O_WRONLY, []byte("x")),
			[]syscall.Errno{syscall.EPERM, syscall.EACCES}},
		{"config unknown key", appendTo(cfg, []byte("no.such.key=1\n")), eINVAL},
		{"config bad number", appendTo(cfg, []byte("segment.bytes=abc\n")), eINVAL},
		{"config below minimum", appendTo(cfg, []byte("segment.bytes=1\n")), eINVAL},
		{"config no '='", appendTo(cfg, []byte("segment.bytes\n")), eINVAL},
		{"config bad enum", appendTo(cfg, []byte("cleanup.policy=sometimes\n")), eINVAL},
		{"config good then bad", appendTo(cfg, []byte("retention.ms=5\nbogus=1\n")), eINVAL},
		{"config binary", appendTo(cfg, randomBytes(rng, 300)), eINVAL},
		{"jsonl not json", appendTo(p("log.jsonl"), []byte("not json\n")), eINVAL},
		{"jsonl array", appendTo(p("log.jsonl"), []byte("[1,2]\n")), eINVAL},
		{"jsonl value number", appendTo(p("log.jsonl"), []byte("{\"value\":1}\n")), eINVAL},
		{"jsonl headers not a list", appendTo(p("log.jsonl"), []byte("{\"value\":\"x\",\"headers\":\"h\"}\n")), eINVAL},
		{"jsonl bad base64", appendTo(p("log.jsonl"), []byte("{\"value_b64\":\"!!!\"}\n")), eINVAL},
		{"jsonl good then bad", appendTo(p("log.jsonl"), []byte("{\"value\":\"good\"}\n{\"value\":\n")), eINVAL},
		{"jsonl nested 100k", appendTo(p("log.jsonl"), nestedJSON(100000)), eINVAL},
		{"jsonl nested header 10k", appendTo(p("log.jsonl"), []byte("{\"value\":\"x\",\"headers\":"+
			strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+"}\n")), eINVAL},
		{"mkdir partition 5", func() error { return os.Mkdir(d.path("h", "5"), 0o755) }, []syscall.Errno{syscall.EINVAL, syscall.ENOENT}},
		{"mkdir partition x", func() error { return os.Mkdir(d.path("h", "x"), 0o755) }, eINVAL},
		{"mkdir existing topic", func() error { return os.Mkdir(d.path("h"), 0o755) }, eEXIST},
		{"mkdir topic 250 chars", func() error { return os.Mkdir(d.path(strings.Repeat("b", 250)), 0o755) }, eINVAL},
		{"mkdir topic 256 chars", func() error { return os.Mkdir(d.path(strings.Repeat("b", 256)), 0o755) },
			[]syscall.Errno{syscall.EINVAL, syscall.ENAMETOOLONG}},
		{"mkdir topic 2000 chars", func() error { return os.Mkdir(d.path(strings.Repeat("b", 2000)), 0o755) },
			[]syscall.Errno{syscall.EINVAL, syscall.ENAMETOOLONG}},
		{"mkdir topic with space", func() error { return os.Mkdir(d.path("a b"), 0o755) }, eINVAL},
		{"mkdir topic with ':'", func() error { return os.Mkdir(d.path("a:b"), 0o755) }, eINVAL},
		{"mkdir topic unicode", func() error { return os.Mkdir(d.path("tøpic"), 0o755) }, eINVAL},
		{"mkdir .metrics", func() error { return os.Mkdir(d.path(".metrics"), 0o755) }, []syscall.Errno{syscall.EEXIST, syscall.EINVAL}},
		{"create a file at the root", writeTo(d.path("file"), os.O_WRONLY|os.O_CREATE, []byte("x")),
			[]syscall.Errno{syscall.EPERM, syscall.EACCES, syscall.EINVAL}},
		{"create a file in a partition", writeTo(p("new"), os.O_WRONLY|os.O_CREATE, []byte("x")),
			[]syscall.Errno{syscall.EPERM, syscall.EACCES, syscall.EINVAL}},
		{"2 MB line to log", appendTo(p("log"), append(bytes.Repeat([]byte("y"), 2<<20), '\n')), eFBIG},
	}
	for i := 0; i < 5; i++ {
		ops = append(ops, hostileOp{fmt.Sprintf("jsonl random bytes %d", i), appendTo(p("log.jsonl"),
			append(randomBytes(rng, 1+rng.Intn(5000)), '\n')), eINVAL})
	}
	return ops
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	rng.Read(b)
	b[0] = 1 // never a JSON object, a comment or a key
	return b
}

func nestedJSON(depth int) []byte {
	return []byte("{\"value\":" + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}\n")
}

// TestHostileSweep: every path form and refused change of docs/spec.md through the
// mount gives the errno of docs/spec.md, the partition is unchanged by refused writes,
// the daemon survives, and its fds and threads do not grow.
func TestHostileSweep(t *testing.T) {
	d := startFresh(t)
	mkTopic(t, d, "h", 1)
	var lines []string
	for i := 0; i < 100; i++ {
		lines = append(lines, fmt.Sprintf("line-%d", i))
	}
	appendFile(t, d.path("h", "0", "log"), strings.Join(lines, "\n")+"\n")
	appendFile(t, d.path("h", "0", "log.jsonl"), "{\"key\":\"k1\",\"value\":\"v1\"}\n")
	lines = append(lines, "v1")
	if err := os.Mkdir(d.path(strings.Repeat("a", 249)), 0o755); err != nil {
		t.Errorf("mkdir of a 249-character topic: %v", err)
	}
	rng := rand.New(rand.NewSource(1))
	sweep := func() {
		for _, op := range pathOps(d) {
			op.run(t)
		}
		cfgBefore := testutil.ReadFile(t, d.path("h", "config"))
		for _, op := range writeOps(d, rng) {
			op.run(t)
		}
		if cfgAfter := testutil.ReadFile(t, d.path("h", "config")); !bytes.Equal(cfgBefore, cfgAfter) {
			t.Errorf("refused config writes changed the config:\n%s\n---\n%s", cfgBefore, cfgAfter)
		}
		checkServedLines(t, d.path("h", "0", "log"), lines)
	}
	sweep() // warm up: pools, caches, goroutines of the first use
	before := d.stats()
	for i := 0; i < 3; i++ {
		sweep()
	}
	// close(2) returns before the daemon has handled the RELEASE the
	// kernel sends after it (a released reader's goroutines end then), so
	// a leak is growth that is still there after a settling time.
	grew := func(after procStats) bool {
		return after.fds > before.fds+2 || before.goroutines >= 0 && after.goroutines > before.goroutines+5
	}
	after := d.stats()
	for settle := time.Now().Add(3 * time.Second); grew(after) && time.Now().Before(settle); after = d.stats() {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("daemon before: %+v after 3 sweeps: %+v", before, after)
	if after.fds > before.fds+2 {
		t.Errorf("fd leak: %d open fds before, %d after", before.fds, after.fds)
	}
	if before.goroutines >= 0 && after.goroutines > before.goroutines+5 {
		t.Errorf("goroutine leak: %d goroutines before, %d after", before.goroutines, after.goroutines)
	}
	if after.threads > before.threads+4 {
		t.Errorf("threads grew from %d to %d", before.threads, after.threads)
	}
	if d.panicked() || !d.running() {
		t.Fatalf("daemon died or panicked:\n%s", tail(d.log.String(), 4000))
	}
	if strings.Contains(d.log.String(), "handler panicked") {
		t.Errorf("a FUSE handler panicked:\n%s", tail(d.log.String(), 4000))
	}
	d.stop()
	if out, code := runPartfs(t, "check", d.data); code != 0 {
		t.Errorf("check: %d\n%s", code, out)
	}
}
