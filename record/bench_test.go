package record

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/partfs/partfs/compression"
	"github.com/partfs/partfs/internal/benchutil"
)

// logLines returns n records of ~120-byte log lines, 1 ms apart.
func logLines(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Timestamp: 1764464400000 + int64(i), Value: []byte(benchutil.LogLine(i))}
	}
	return recs
}

// codecLib compresses src with the codec library alone, as a baseline.
func codecLib(c Codec) func(dst, src []byte) []byte {
	switch c {
	case Gzip:
		w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
		return func(dst, src []byte) []byte {
			buf := bytes.NewBuffer(dst[:0])
			w.Reset(buf)
			w.Write(src)
			w.Close()
			return buf.Bytes()
		}
	case Snappy:
		return func(dst, src []byte) []byte { return s2.EncodeSnappy(dst[:cap(dst)], src) }
	case LZ4:
		var lc lz4.Compressor
		return func(dst, src []byte) []byte {
			dst = dst[:cap(dst)]
			n := 0
			for p := src; len(p) > 0; {
				k := min(len(p), lz4BlockSize)
				m, _ := lc.CompressBlock(p[:k], dst[n:])
				n += m
				p = p[k:]
			}
			return dst[:n]
		}
	case Zstd: // without the frame checksum, as partfs and zstd-jni write
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
		return func(dst, src []byte) []byte { return enc.EncodeAll(src, dst[:0]) }
	}
	return nil
}

// codecUnlib decompresses what codecLib wrote.
func codecUnlib(c Codec) func(dst, src []byte) []byte {
	switch c {
	case Gzip:
		var r gzip.Reader
		return func(dst, src []byte) []byte {
			r.Reset(bytes.NewReader(src))
			buf := bytes.NewBuffer(dst[:0])
			buf.ReadFrom(&r)
			return buf.Bytes()
		}
	case Snappy:
		return func(dst, src []byte) []byte { out, _ := s2.Decode(dst[:cap(dst)], src); return out }
	case Zstd:
		dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		return func(dst, src []byte) []byte { out, _ := dec.DecodeAll(src, dst[:0]); return out }
	}
	return nil
}

// lz4BlockSize is Kafka's LZ4 block (BD 0x40), as the baselines cut it.
const lz4BlockSize = 64 << 10

var benchCodecs = []Codec{Gzip, Snappy, LZ4, Zstd}

// codecCase is one codec's benchmark input: 1,000 log lines, their
// uncompressed records area and their batch compressed with c.
type codecCase struct {
	c     Codec
	recs  []Record
	area  []byte
	batch []byte
}

// eachCodec runs fn as a sub-benchmark per codec of codecs.
func eachCodec(b *testing.B, codecs []Codec, fn func(b *testing.B, k *codecCase)) {
	recs := logLines(1000)
	area, _ := appendRecords(nil, recs, recs[0].Timestamp, offsetDeltas{})
	for _, c := range codecs {
		b.Run(c.String(), func(b *testing.B) {
			var e Encoder
			batch, _ := e.AppendBatch(nil, 0, recs, BatchOptions{Codec: c})
			fn(b, &codecCase{c: c, recs: recs, area: area, batch: batch})
		})
	}
}

// libBlocks decodes xerial or Kafka-LZ4 framed blocks with the library's
// block decoder only (no framing checks): the raw building block.
func libBlocks(c Codec, dst, src []byte) []byte {
	dst = dst[:0]
	if c == Snappy {
		for p := src[16:]; len(p) > 4; {
			n := int(uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3]))
			l, _ := s2.DecodedLen(p[4 : 4+n])
			at := len(dst)
			dst = slices.Grow(dst, l)[:at+l]
			s2.Decode(dst[at:], p[4:4+n])
			p = p[4+n:]
		}
		return dst
	}
	for p := src[7:]; len(p) > 4; {
		n := int(uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24)
		if n == 0 {
			break
		}
		at := len(dst)
		dst = slices.Grow(dst, lz4BlockSize)[:at+lz4BlockSize]
		m, _ := lz4.UncompressBlock(p[4:4+n&0x7fffffff], dst[at:])
		dst = dst[:at+m]
		p = p[4+n&0x7fffffff:]
	}
	return dst
}

// BenchmarkDecompress: the decompression step alone (our framing, checks
// and bound: Decoder.Decompressed) vs the codec library on the same payload.
func BenchmarkDecompress(b *testing.B) {
	eachCodec(b, benchCodecs, func(b *testing.B, k *codecCase) {
		h, _ := ParseHeader(k.batch)
		bt := &Batch{Header: h, Raw: k.batch}
		var d Decoder
		dst := make([]byte, 0, 2*len(k.area))
		benchutil.RunPair(b, len(k.area),
			func() {
				if out, err := d.Decompressed(bt); err != nil || len(out) != len(k.area) {
					b.Fatal(err)
				}
			},
			libDecompress(k.c, &dst, k.batch[BatchHeaderSize:]))
	})
}

// BenchmarkCompress: the compression step alone (our Kafka framing) vs the
// codec library on the same records area.
func BenchmarkCompress(b *testing.B) {
	eachCodec(b, benchCodecs, func(b *testing.B, k *codecCase) {
		var cs compression.Compressors
		lib := codecLib(k.c)
		out := make([]byte, 0, 2*len(k.area))
		dst := make([]byte, 0, 2*len(k.area))
		benchutil.RunPair(b, len(k.area),
			func() { out, _ = cs.Compress(out[:0], k.area, k.c) },
			func() { dst = lib(dst, k.area) })
	})
}

// BenchmarkParseRecords: the record parser alone on an uncompressed batch
// (no CRC), ns per record reported.
func BenchmarkParseRecords(b *testing.B) {
	recs := logLines(1000)
	var e Encoder
	batch, _ := e.AppendBatch(nil, 0, recs, BatchOptions{})
	h, _ := ParseHeader(batch)
	bt := &Batch{Header: h, Raw: batch}
	var d Decoder
	fn := func(*Record) bool { return true }
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Records(bt, fn)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/record")
}

// BenchmarkAppendRecords: serializing the records area alone (no
// compression, no header), ns per record reported.
func BenchmarkAppendRecords(b *testing.B) {
	recs := logLines(1000)
	area, _ := appendRecords(nil, recs, recs[0].Timestamp, offsetDeltas{})
	b.SetBytes(int64(len(area)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		area, _ = appendRecords(area[:0], recs, recs[0].Timestamp, offsetDeltas{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/record")
}

// walkLengths only walks the records' length varints (1 or 2 bytes, as in
// these batches): the least work a record parser does.
//
//go:noinline
func walkLengths(data []byte) (n int) {
	for p := 0; p+1 < len(data); n++ {
		u, k := uv2(data, p)
		if k == 0 {
			break
		}
		p += k + int(u>>1)
	}
	return n
}

// BenchmarkDecodeFloor: the highest x-baseline a decoder of these LZ4 and
// snappy batches could reach: the library's block decoder, then a loop
// that only walks the records' length varints (no field parsed, no
// record delivered), timed alternately with the library alone. It reports
// the walk's ns per record and floor = lib/(lib+walk).
func BenchmarkDecodeFloor(b *testing.B) {
	eachCodec(b, []Codec{Snappy, LZ4}, func(b *testing.B, k *codecCase) {
		dst := make([]byte, 0, 2*len(k.area))
		var tLib, tWalk time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			dst = libBlocks(k.c, dst, k.batch[BatchHeaderSize:])
			t1 := time.Now()
			if walkLengths(dst) != len(k.recs) {
				b.Fatal("walk")
			}
			tWalk += time.Since(t1)
			tLib += t1.Sub(t0)
		}
		b.ReportMetric(float64(tWalk.Nanoseconds())/float64(b.N)/float64(len(k.recs)), "walk-ns/record")
		b.ReportMetric(tLib.Seconds()/(tLib+tWalk).Seconds(), "floor")
	})
}
