package record

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// logLines returns n records of ~120-byte log lines, 1 ms apart.
func logLines(n int) []Record {
	levels := []string{"INFO ", "WARN ", "DEBUG", "ERROR"}
	recs := make([]Record, n)
	for i := range recs {
		line := fmt.Sprintf("2026-11-30T01:%02d:%02d.%03dZ %s [worker-%d] request handled path=/api/v1/items/%d status=%d dur_ms=%d",
			i/60000%60, i/1000%60, i%1000, levels[i%4], i%16, 100000+i*7919%900000, 200+i%3*100, i%97)
		recs[i] = Record{Timestamp: 1764464400000 + int64(i), Value: []byte(line)}
	}
	return recs
}

// baselineNs times fn (the baseline on the same bytes) for n iterations in
// this run and returns its ns/op. It runs before b.ResetTimer, so it does
// not count in the benchmark's own figures.
func baselineNs(n int, fn func(n int)) float64 {
	fn(1) // warm up
	start := time.Now()
	fn(n)
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// reportRatio reports our speed relative to the baseline (>1 = faster) and
// the baseline's own MB/s.
func reportRatio(b *testing.B, baseNs float64, bytes int) {
	ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(baseNs/ours, "x-baseline")
	b.ReportMetric(float64(bytes)/baseNs*1e3, "base-MB/s")
}

// kmsgEncode is the independent encoder: franz-go's kmsg records and batch,
// CRC-32C computed the same way.
func kmsgEncode(dst []byte, recs []Record) []byte {
	var area []byte
	for i := range recs {
		kr := kmsg.Record{TimestampDelta64: recs[i].Timestamp - recs[0].Timestamp, OffsetDelta: int32(i), Key: recs[i].Key, Value: recs[i].Value}
		kr.Length = int32(recordLenNoPrefix(&recs[i], kr.TimestampDelta64, i))
		area = kr.AppendTo(area)
	}
	kb := kmsg.RecordBatch{Magic: 2, NumRecords: int32(len(recs)), Records: area, Length: int32(49 + len(area))}
	out := kb.AppendTo(dst)
	crc := crc32.Checksum(out[21:], castagnoli)
	out[17], out[18], out[19], out[20] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return out
}

func recordLenNoPrefix(r *Record, ts int64, i int) int {
	n, _ := recordBodyLen(r, ts, i)
	return n
}

func BenchmarkEncodeNone(b *testing.B) {
	recs := logLines(1000)
	var e Encoder
	batch, _ := e.AppendBatch(nil, 0, recs, BatchOptions{})
	base := baselineNs(b.N, func(n int) {
		buf := make([]byte, 0, 2*len(batch))
		for i := 0; i < n; i++ {
			buf = kmsgEncode(buf[:0], recs)
		}
	})
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch, _ = e.AppendBatch(batch[:0], 0, recs, BatchOptions{})
	}
	reportRatio(b, base, len(batch))
}

func BenchmarkDecodeNone(b *testing.B) {
	recs := logLines(1000)
	var e Encoder
	batch, _ := e.AppendBatch(nil, 0, recs, BatchOptions{})
	base := baselineNs(b.N, func(n int) {
		var kb kmsg.RecordBatch
		var kr kmsg.Record
		for i := 0; i < n; i++ {
			kb.ReadFrom(batch)
			p := kb.Records
			for j := int32(0); j < kb.NumRecords; j++ {
				l, n := readVarint32(p)
				kr.ReadFrom(p[:n+int(l)])
				p = p[n+int(l):]
			}
		}
	})
	h, _ := ParseHeader(batch)
	bt := &Batch{Header: h, Raw: batch}
	var d Decoder
	var sum int
	fn := func(r *Record) bool { sum += len(r.Value); return true }
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// the scanner's CRC check is part of decoding a batch
		s := NewBytesScanner(batch, "b")
		s.Next()
		d.Records(bt, fn)
	}
	reportRatio(b, base, len(batch))
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
	case Zstd:
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
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

var benchCodecs = []Codec{Gzip, Snappy, LZ4, Zstd}

// BenchmarkEncodeCodec: a whole batch with compression vs the codec library
// alone compressing the same uncompressed records area. MB/s counts
// uncompressed bytes.
func BenchmarkEncodeCodec(b *testing.B) {
	recs := logLines(1000)
	area, _ := appendRecords(nil, recs, recs[0].Timestamp)
	for _, c := range benchCodecs {
		b.Run(c.String(), func(b *testing.B) {
			lib := codecLib(c)
			base := baselineNs(b.N, func(n int) {
				dst := make([]byte, 0, 2*len(area))
				for i := 0; i < n; i++ {
					dst = lib(dst, area)
				}
			})
			var e Encoder
			batch, _ := e.AppendBatch(nil, 0, recs, BatchOptions{Codec: c})
			b.SetBytes(int64(len(area)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				batch, _ = e.AppendBatch(batch[:0], 0, recs, BatchOptions{Codec: c})
			}
			reportRatio(b, base, len(area))
			b.ReportMetric(float64(len(area))/float64(len(batch)), "ratio")
		})
	}
}

// BenchmarkDecodeCodec: decoding a compressed batch into records vs the
// codec library alone decompressing the same payload.
func BenchmarkDecodeCodec(b *testing.B) {
	recs := logLines(1000)
	area, _ := appendRecords(nil, recs, recs[0].Timestamp)
	for _, c := range benchCodecs {
		b.Run(c.String(), func(b *testing.B) {
			var e Encoder
			batch, _ := e.AppendBatch(nil, 0, recs, BatchOptions{Codec: c})
			payload := batch[BatchHeaderSize:]
			unlib := codecUnlib(c)
			if c == LZ4 || c == Snappy { // framed payloads: the library's block decoder on the same blocks
				unlib = nil
			}
			base := baselineNs(b.N, func(n int) {
				dst := make([]byte, 0, 2*len(area))
				for i := 0; i < n; i++ {
					if unlib != nil {
						dst = unlib(dst, payload)
					} else {
						dst = libBlocks(c, dst, payload)
					}
				}
			})
			h, _ := ParseHeader(batch)
			bt := &Batch{Header: h, Raw: batch}
			var d Decoder
			fn := func(*Record) bool { return true }
			b.SetBytes(int64(len(area)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := d.Records(bt, fn); err != nil {
					b.Fatal(err)
				}
			}
			reportRatio(b, base, len(area))
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
			dst = grow(dst, l)[:at+l]
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
		dst = grow(dst, lz4BlockSize)[:at+lz4BlockSize]
		m, _ := lz4.UncompressBlock(p[4:4+n&0x7fffffff], dst[at:])
		dst = dst[:at+m]
		p = p[4+n&0x7fffffff:]
	}
	return dst
}
