package e2e

import (
	"os"
	"runtime/pprof"
	"strings"
	"testing"
)

// benchLine is one ~120-byte log line; benchLines of them make the input.
const benchLines = 1 << 20

var benchLine = "line-" + strings.Repeat("0", 114) + "\n"

// BenchmarkCatLog measures `cat log > /dev/null` (bytes per op = the log).
func BenchmarkCatLog(b *testing.B) { benchCat(b, "t/0/log") }

// BenchmarkCatJSONL measures `cat log.jsonl > /dev/null`.
func BenchmarkCatJSONL(b *testing.B) { benchCat(b, "t/0/log.jsonl") }

func benchCat(b *testing.B, file string) {
	e := newEnv(b, mountOpt{})
	in := writeBenchInput(b)
	e.Sh("mkdir t && cat " + in + " >> t/0/log")
	b.SetBytes(int64(len(e.Sh("cat " + file))))
	defer startProfile(b)()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Sh("cat " + file + " > /dev/null")
	}
}

// BenchmarkAppendCat measures `cat FILE >> log` of ~120-byte lines.
func BenchmarkAppendCat(b *testing.B) {
	e := newEnv(b, mountOpt{})
	in := writeBenchInput(b)
	e.Sh("mkdir t")
	b.SetBytes(int64(len(benchLine) * benchLines))
	defer startProfile(b)()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Sh("cat " + in + " >> t/0/log")
	}
}

// writeBenchInput writes the benchmark's input lines to a temporary file.
func writeBenchInput(b *testing.B) string {
	in := b.TempDir() + "/in"
	if err := os.WriteFile(in, []byte(strings.Repeat(benchLine, benchLines)), 0o644); err != nil {
		b.Fatal(err)
	}
	return in
}

// startProfile profiles this process into $PARTFS_CPUPROFILE when set; call
// the returned function to stop.
func startProfile(b *testing.B) (stop func()) {
	p := os.Getenv("PARTFS_CPUPROFILE")
	if p == "" {
		return func() {}
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	_ = pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}
