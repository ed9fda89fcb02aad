package compression

import (
	"math/rand"
	"slices"
	"testing"
)

// TestCodecFraming: compressing random (incompressible) bytes with each
// codec adds no more than MaxFraming says, at block edges and between.
func TestCodecFraming(t *testing.T) {
	var c Compressors
	r := rand.New(rand.NewSource(1))
	sizes := []int{0, 1, 1000, 32<<10 - 1, 32 << 10, 32<<10 + 1, 64<<10 - 1, 64 << 10, 64<<10 + 1, 128 << 10, 128<<10 + 1, 1 << 20, 3<<20 + 17}
	for range 8 {
		sizes = append(sizes, r.Intn(1<<20))
	}
	for codec := Gzip; codec <= Zstd; codec++ {
		for _, n := range sizes {
			src := make([]byte, n)
			r.Read(src)
			out, err := c.Compress(nil, src, codec)
			if err != nil {
				t.Fatal(err)
			}
			if over := len(out) - n; over > codec.MaxFraming(n) {
				t.Errorf("%v of %d random bytes adds %d, MaxFraming says %d", codec, n, over, codec.MaxFraming(n))
			}
		}
	}
	if None.MaxFraming(1<<20) != 0 {
		t.Errorf("None.MaxFraming = %d", None.MaxFraming(1<<20))
	}
}

// TestCodecNames: every name Names lists parses, and each codec's
// String parses back to it.
func TestCodecNames(t *testing.T) {
	names := Names()
	if !slices.Equal(names, []string{"none", "uncompressed", "gzip", "snappy", "lz4", "zstd"}) {
		t.Fatalf("Names = %q", names)
	}
	for _, n := range names {
		if _, err := Parse(n); err != nil {
			t.Errorf("Parse(%q): %v", n, err)
		}
	}
	for c := None; c <= Zstd; c++ {
		if back, err := Parse(c.String()); err != nil || back != c {
			t.Errorf("Parse(%v.String()) = %v, %v", c, back, err)
		}
	}
	if Codec(5).Valid() || Codec(5).String() != "unknown(5)" {
		t.Errorf("codec 5 is valid or named %q", Codec(5).String())
	}
}

// TestCodecValidFor: zstd is valid only in V2 batches; the other codecs in
// every format; ids 5-7 in none.
func TestCodecValidFor(t *testing.T) {
	for magic := int8(0); magic <= 2; magic++ {
		for c := None; c <= Zstd; c++ {
			if want := c != Zstd || magic == 2; c.ValidFor(magic) != want {
				t.Errorf("%v.ValidFor(%d) = %v", c, magic, !want)
			}
		}
		if Codec(5).ValidFor(magic) || Codec(7).ValidFor(magic) {
			t.Errorf("codec 5 or 7 valid for magic %d", magic)
		}
	}
}

func TestParseCodec(t *testing.T) {
	for _, c := range []Codec{None, Gzip, Snappy, LZ4, Zstd} {
		if got, err := Parse(c.String()); err != nil || got != c {
			t.Errorf("%v: %v %v", c, got, err)
		}
	}
	if _, err := Parse("brotli"); err == nil {
		t.Error("brotli accepted")
	}
}
