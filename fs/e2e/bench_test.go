package e2e

import (
	"os"
	"runtime/pprof"
	"strings"
	"testing"
)

// BenchmarkCatLog measures `cat log > /dev/null` (bytes per op = the log).
func BenchmarkCatLog(b *testing.B) { benchCat(b, "t/0/log") }

// BenchmarkCatJSONL measures `cat log.jsonl > /dev/null`.
func BenchmarkCatJSONL(b *testing.B) { benchCat(b, "t/0/log.jsonl") }

func benchCat(b *testing.B, file string) {
	e := newEnv(b, mountOpt{})
	line := "line-" + strings.Repeat("0", 114) + "\n"
	in := b.TempDir() + "/in"
	if err := os.WriteFile(in, []byte(strings.Repeat(line, 1<<20)), 0o644); err != nil {
		b.Fatal(err)
	}
	e.sh("mkdir t && cat " + in + " >> t/0/log")
	size := int64(len(e.sh("cat " + file)))
	b.SetBytes(size)
	if p := os.Getenv("PARTFS_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.sh("cat " + file + " > /dev/null")
	}
}

// BenchmarkAppendCat measures `cat FILE >> log` of ~120-byte lines.
func BenchmarkAppendCat(b *testing.B) {
	e := newEnv(b, mountOpt{})
	line := "line-" + strings.Repeat("0", 114) + "\n"
	in := b.TempDir() + "/in"
	if err := os.WriteFile(in, []byte(strings.Repeat(line, 1<<20)), 0o644); err != nil {
		b.Fatal(err)
	}
	e.sh("mkdir t")
	b.SetBytes(int64(len(line) << 20))
	if p := os.Getenv("PARTFS_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.sh("cat " + in + " >> t/0/log")
	}
}
