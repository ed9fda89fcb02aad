package compression

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// needTool skips without the reference tool name, or fails in CI, where
// test.sh installs it.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (test.sh installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
}

// runTool runs name with args on stdin in and returns its stdout.
func runTool(t *testing.T, in []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr.Bytes())
	}
	return out
}

// referenceInputs are records areas and bytes that do not compress.
func referenceInputs() [][]byte {
	in := inflateInputs()
	return [][]byte{in[2], in[3], in[4], in[5], in[6], in[7]}
}

// TestLZ4MatchesReference: our Kafka LZ4 frames are byte for byte what
// the format's reference tool writes at its fast level with 64 KiB
// independent blocks and no content checksum (the frame Kafka writes),
// and it decodes them.
func TestLZ4MatchesReference(t *testing.T) {
	needTool(t, "lz4")
	var c Compressors
	for _, in := range referenceInputs() {
		ours, err := c.kafkaLZ4(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if ref := runTool(t, in, "lz4", "-1", "-B4", "-BI", "--no-frame-crc", "-c"); !bytes.Equal(ours, ref) {
			t.Errorf("%d bytes: our frame has %d bytes, lz4's %d, or differs", len(in), len(ours), len(ref))
		}
		if got := runTool(t, ours, "lz4", "-d", "-c"); !bytes.Equal(got, in) {
			t.Errorf("%d bytes: lz4 -d gave %d bytes", len(in), len(got))
		}
	}
}

// TestReferenceToolsDecode: the reference zstd and gzip tools decode what
// we write; we decode what they write at Kafka's default levels.
func TestReferenceToolsDecode(t *testing.T) {
	for _, c := range []struct {
		codec Codec
		tool  string
		level string
	}{{Zstd, "zstd", "-3"}, {Gzip, "gzip", "-6"}} {
		needTool(t, c.tool)
		var cs Compressors
		var d Decompressors
		for _, in := range referenceInputs() {
			ours, err := cs.Compress(nil, in, c.codec)
			if err != nil {
				t.Fatal(err)
			}
			if got := runTool(t, ours, c.tool, "-d", "-c"); !bytes.Equal(got, in) {
				t.Errorf("%s -d: %d bytes from our %d, want %d", c.tool, len(got), len(ours), len(in))
			}
			theirs := runTool(t, in, c.tool, c.level, "-c")
			if got, err := d.Decompress(nil, theirs, c.codec, 2, 1<<30); err != nil || !bytes.Equal(got, in) {
				t.Errorf("%s %s: we decoded %d bytes, %v", c.tool, c.level, len(got), err)
			}
		}
	}
}

// TestLZ4FrameEdges: around the 64 KiB block boundary and the block
// compressor's end limits, our frame, read in place or through a copy, is
// the reference tool's, and it decodes it.
func TestLZ4FrameEdges(t *testing.T) {
	needTool(t, "lz4")
	text := bytes.Repeat([]byte("partfs lz4 edge line 0123456789\n"), 5000)
	var c Compressors
	for _, n := range []int{1, 12, 13, 17, lz4BlockSize - 1, lz4BlockSize, lz4BlockSize + 1,
		lz4BlockSize + 12, lz4BlockSize + 13, 2*lz4BlockSize + 1} {
		in := text[:n:n]
		ref := runTool(t, in, "lz4", "-1", "-B4", "-BI", "--no-frame-crc", "-c")
		wide := append(make([]byte, 0, n+lz4Padded), in...)
		for _, src := range [][]byte{in, wide} {
			ours, err := c.kafkaLZ4(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, ref) {
				t.Errorf("%d bytes (capacity %d): our frame has %d bytes, lz4's %d, or differs", n, cap(src), len(ours), len(ref))
			}
			if got := runTool(t, ours, "lz4", "-d", "-c"); !bytes.Equal(got, in) {
				t.Errorf("%d bytes: lz4 -d gave %d bytes", n, len(got))
			}
		}
	}
}
