package crc32c

import (
	"hash/crc32"
	"math/rand"
	"testing"
)

// TestUpdate compares Update with hash/crc32 at every length up to 4 KiB
// and some longer, at every alignment mod 64, from random registers, on
// the folded path where this CPU has it and on the path of a CPU without.
func TestUpdate(t *testing.T) {
	folds := useFold
	defer func() { useFold = folds }()
	if folds {
		t.Run("folded", checkUpdate)
	}
	useFold = false
	t.Run("hash-crc32", checkUpdate)
}

func checkUpdate(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	buf := make([]byte, 300_000)
	rng.Read(buf)
	lengths := []int{65_536, 131_000, 299_936}
	for n := 0; n <= 4096; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		at := rng.Intn(64)
		p := buf[at : at+n]
		crc := rng.Uint32()
		if got, want := Update(crc, p), crc32.Update(crc, table, p); got != want {
			t.Fatalf("Update(%08x, %d bytes at %d) = %08x, hash/crc32 %08x", crc, n, at, got, want)
		}
	}
}

// TestFoldKnown checks the folded path on inputs whose CRC-32C is known:
// the check value of "123456789" repeated, and all zeros and all ones.
func TestFoldKnown(t *testing.T) {
	if !useFold {
		t.Skip("no AVX-512 VPCLMULQDQ: Update is hash/crc32's")
	}
	for _, b := range []byte{0, 0xff, 0x5a} {
		p := make([]byte, 4096+17)
		for i := range p {
			p[i] = b
		}
		if got, want := Update(0, p), crc32.Checksum(p, table); got != want {
			t.Fatalf("%d bytes of %02x: %08x, hash/crc32 %08x", len(p), b, got, want)
		}
	}
	if got := Checksum([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("check value %08x, want e3069283", got)
	}
}

// TestSingleBit flips each bit of a 1 KiB input: every flip changes the
// checksum, as hash/crc32's does.
func TestSingleBit(t *testing.T) {
	p := make([]byte, 1024)
	for i := 0; i < len(p)*8; i++ {
		p[i/8] ^= 1 << (i % 8)
		if got, want := Checksum(p), crc32.Checksum(p, table); got != want {
			t.Fatalf("bit %d: %08x, hash/crc32 %08x", i, got, want)
		}
		p[i/8] ^= 1 << (i % 8)
	}
}

func FuzzUpdate(f *testing.F) {
	f.Add(uint32(0), make([]byte, 600))
	f.Add(uint32(0xffffffff), make([]byte, 1100))
	f.Fuzz(func(t *testing.T, crc uint32, p []byte) {
		if got, want := Update(crc, p), crc32.Update(crc, table, p); got != want {
			t.Fatalf("Update(%08x, %d bytes) = %08x, hash/crc32 %08x", crc, len(p), got, want)
		}
	})
}

// BenchmarkUpdate: Update against hash/crc32 on the same bytes, in
// alternating rounds; x-hash-crc32 is the median of hash/crc32's time
// over ours (ns/op and MB/s are ours).
func BenchmarkUpdate(b *testing.B) {
	for _, n := range []int{512, 4096, 131_000} {
		b.Run(sizeName(n), func(b *testing.B) {
			p := make([]byte, n)
			rand.New(rand.NewSource(1)).Read(p)
			b.SetBytes(int64(n))
			var ratios []float64
			var sink uint32
			for done := 0; done < b.N; done += 256 {
				k := min(256, b.N-done)
				ours := timeIt(k, func() { sink += Update(sink, p) })
				b.StopTimer()
				lib := timeIt(k, func() { sink += crc32.Update(sink, table, p) })
				b.StartTimer()
				ratios = append(ratios, lib/ours)
			}
			b.ReportMetric(median(ratios), "x-hash-crc32")
		})
	}
}

// BenchmarkUpdateCold is BenchmarkUpdate of 64 KiB pieces walking a
// 256 MiB buffer, which the CPU caches do not hold: the bytes come from
// memory, as a page cache's do.
func BenchmarkUpdateCold(b *testing.B) {
	p := make([]byte, 256<<20)
	rand.New(rand.NewSource(1)).Read(p)
	const piece = 64 << 10
	b.SetBytes(piece)
	b.ResetTimer()
	var ratios []float64
	var sink uint32
	off := 0
	next := func() []byte { off = (off + piece) % len(p); return p[off : off+piece] }
	for done := 0; done < b.N; done += 256 {
		k := min(256, b.N-done)
		ours := timeIt(k, func() { sink += Update(sink, next()) })
		b.StopTimer()
		lib := timeIt(k, func() { sink += crc32.Update(sink, table, next()) })
		b.StartTimer()
		ratios = append(ratios, lib/ours)
	}
	b.ReportMetric(median(ratios), "x-hash-crc32")
}
