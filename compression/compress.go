package compression

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Framing constants of the compressed records area (docs/format-record.md).
var (
	xerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
	// kafkaLZ4Header: magic, FLG 0x60 (v1, independent blocks), BD 0x40
	// (64 KiB blocks), HC 0x82, exactly as Kafka's Lz4BlockOutputStream.
	kafkaLZ4Header = []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82}
)

const (
	xerialBlockSize = 32 << 10 // snappy-java SnappyOutputStream block size
	lz4BlockSize    = 64 << 10 // Kafka's BD 0x40
	lz4Uncompressed = 1 << 31  // block size flag: stored as is
)

// Compressors holds an Encoder's reusable compression state.
type Compressors struct {
	gz   *gzip.Writer
	zstd *zstd.Encoder
	lz4  *lz4Table
	// lz4Copy holds a block read through a copy (compressBlock), made
	// for the first block that needs it
	lz4Copy *[lz4Padded]byte
	tmp     []byte
}

// compress appends src compressed with c to dst, framed as Kafka's Java
// client writes it.
func (c *Compressors) Compress(dst, src []byte, codec Codec) ([]byte, error) {
	if codec == None || !codec.Valid() {
		return dst, fmt.Errorf("record: cannot compress with codec %v", codec)
	}
	return codecs[codec].compress(c, dst, src)
}

// appendWriter is an io.Writer appending to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (c *Compressors) gzip(dst, src []byte) ([]byte, error) {
	w := &appendWriter{b: dst}
	if c.gz == nil {
		c.gz = gzip.NewWriter(w)
	} else {
		c.gz.Reset(w)
	}
	if _, err := c.gz.Write(src); err != nil {
		return dst, fmt.Errorf("record: gzip: %w", err)
	}
	if err := c.gz.Close(); err != nil {
		return dst, fmt.Errorf("record: gzip: %w", err)
	}
	return w.b, nil
}

// appendXerial writes snappy-java's stream framing: the 16-byte header, then
// [int32 BE length][raw snappy block] per 32 KiB of input.
func appendXerial(dst, src []byte) []byte {
	dst = append(dst, xerialHeader...)
	for len(src) > 0 {
		chunk := src[:min(len(src), xerialBlockSize)]
		src = src[len(chunk):]
		at := len(dst)
		bound := 4 + s2.MaxEncodedLen(len(chunk))
		dst = grow(dst, bound)[:at+bound]
		enc := s2.EncodeSnappy(dst[at+4:], chunk)
		binary.BigEndian.PutUint32(dst[at:], uint32(len(enc)))
		dst = dst[:at+4+len(enc)]
	}
	return dst
}

// kafkaLZ4 writes Kafka's LZ4 frame: the fixed header, 64 KiB blocks
// (stored uncompressed when compression does not help), the end mark. A
// block is read in place when src's capacity runs lz4Padded bytes past its
// start (AppendBatch leaves that room), else through a copy.
func (c *Compressors) kafkaLZ4(dst, src []byte) ([]byte, error) {
	if c.lz4 == nil {
		c.lz4 = new(lz4Table)
	}
	dst = append(dst, kafkaLZ4Header...)
	for len(src) > 0 {
		chunk := src[:min(len(src), lz4BlockSize)]
		src = src[len(chunk):]
		at := len(dst)
		bound := 4 + lz4BlockBound(len(chunk))
		dst = grow(dst, bound)[:at+bound]
		if cap(chunk) < lz4Padded && c.lz4Copy == nil {
			c.lz4Copy = new([lz4Padded]byte)
		}
		n := c.lz4.compressBlock(dst[at+4:], chunk, c.lz4Copy)
		if n >= len(chunk) {
			n = copy(dst[at+4:], chunk)
			binary.LittleEndian.PutUint32(dst[at:], uint32(n)|lz4Uncompressed)
		} else {
			binary.LittleEndian.PutUint32(dst[at:], uint32(n))
		}
		dst = dst[:at+4+n]
	}
	return binary.LittleEndian.AppendUint32(dst, 0), nil
}

// zstdEncode writes one zstd frame at the default level (Kafka's level 3)
// without a content checksum, as zstd-jni writes Kafka's frames (the
// batch's CRC-32C covers them); the frame's checksum would cost 3-4 % of
// the encoding.
func (c *Compressors) zstdEncode(dst, src []byte) ([]byte, error) {
	if c.zstd == nil {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
		if err != nil {
			return dst, fmt.Errorf("record: zstd: %w", err)
		}
		c.zstd = enc
	}
	return c.zstd.EncodeAll(src, dst), nil
}

// grow makes room for n more bytes after len(b) (capacity only).
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), 2*cap(b)+n)
	copy(nb, b)
	return nb
}

// InPlaceCap is the capacity past a source's start that lets Compress read
// its LZ4 blocks in place rather than through a copy.
const InPlaceCap = lz4Padded
