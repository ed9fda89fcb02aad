package record

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/internal/benchutil"
)

// franzCodecs are franz-go's codecs, indexed like allCodecs.
var franzCodecs = []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}

// franzBuilder builds V2 batches as franz-go's producer does: records
// serialized with kmsg, the records area compressed with kgo's default
// compressor (pooled codecs), the header with kmsg, then the CRC-32C.
type franzBuilder struct {
	comp kgo.Compressor // nil: no compression
	area []byte
	buf  bytes.Buffer
}

func newFranzBuilder(c kgo.CompressionCodec) (*franzBuilder, error) {
	comp, err := kgo.DefaultCompressor(c)
	return &franzBuilder{comp: comp}, err
}

// build appends the batch of recs at offset base to dst.
func (f *franzBuilder) build(dst []byte, base int64, recs []Record) []byte {
	f.area = f.area[:0]
	for i := range recs {
		r := &recs[i]
		kr := kmsg.Record{TimestampDelta64: r.Timestamp - recs[0].Timestamp, OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		n, _ := recordBodyLen(r, kr.TimestampDelta64, int64(i))
		kr.Length = int32(n)
		f.area = kr.AppendTo(f.area)
	}
	out, codec := f.area, kgo.CompressionCodecType(0)
	if f.comp != nil {
		f.buf.Reset()
		out, codec = f.comp.Compress(&f.buf, f.area)
	}
	b := kmsg.RecordBatch{FirstOffset: base, PartitionLeaderEpoch: -1, Magic: 2, Attributes: int16(codec),
		LastOffsetDelta: int32(len(recs) - 1), FirstTimestamp: recs[0].Timestamp, MaxTimestamp: recs[len(recs)-1].Timestamp,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(recs)), Records: out}
	at := len(dst)
	dst = b.AppendTo(dst)
	raw := dst[at:]
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
	return dst
}

// franzReader parses batches as a franz-go consumer does: the header
// with kmsg, the CRC-32C checked, the records area decompressed with
// kgo's default decompressor, then each record parsed into a reused
// kmsg.Record.
type franzReader struct {
	dec kgo.Decompressor
	kb  kmsg.RecordBatch
	kr  kmsg.Record
}

// records calls fn for each record of the batch in raw; false on any
// failure.
func (f *franzReader) records(raw []byte, fn func(*kmsg.Record)) bool {
	if f.kb.ReadFrom(raw) != nil || uint32(f.kb.CRC) != crc32.Checksum(raw[21:], castagnoli) {
		return false
	}
	p, err := f.dec.Decompress(f.kb.Records, kgo.CompressionCodecType(f.kb.Attributes&7))
	if err != nil {
		return false
	}
	for j := int32(0); j < f.kb.NumRecords; j++ {
		l, n := readVarint32(p)
		if n <= 0 || l < 0 || n+int(l) > len(p) || f.kr.ReadFrom(p[:n+int(l)]) != nil {
			return false
		}
		fn(&f.kr)
		p = p[n+int(l):]
	}
	return true
}

// reportPeer reports ours (t[0]) against franz-go (t[1]) on a batch of
// size bytes: ours's ns/op and MB/s, franz-go's MB/s, x-franz (franz-go's
// time over ours: 1.5 = ours is 1.5× as fast) and, given the compression
// library alone (t[2]), ceiling: franz-go's time over the library's, the
// highest x-franz any encoder or decoder that runs that library could
// reach; given our building of the records area alone too (t[3]), bound:
// franz-go's time over the library's and that together, the highest
// x-franz an encoder running the library after building the area as we
// do could reach.
func reportPeer(b *testing.B, size int, t []time.Duration) {
	benchutil.ReportOurs(b, size, t[0])
	b.ReportMetric(float64(size)*float64(b.N)/t[1].Seconds()/1e6, "franz-MB/s")
	b.ReportMetric(t[1].Seconds()/t[0].Seconds(), "x-franz")
	if len(t) > 2 {
		b.ReportMetric(t[1].Seconds()/t[2].Seconds(), "ceiling")
	}
	if len(t) > 3 {
		b.ReportMetric(t[1].Seconds()/(t[2]+t[3]).Seconds(), "bound")
	}
}

// BenchmarkEncodeCodec: a 1,000-record batch encoded with each codec
// (records area, compression, header, CRC) against franz-go's producer
// doing the same (franzBuilder), alternately in the same run, and the
// codec library alone compressing the same records area (the ceiling).
// MB/s counts the uncompressed batch.
func BenchmarkEncodeCodec(b *testing.B) {
	eachCodec(b, allCodecs, func(b *testing.B, k *codecCase) {
		fb, err := newFranzBuilder(franzCodecs[k.c])
		if err != nil {
			b.Fatal(err)
		}
		var e Encoder
		batch, peer := k.batch, fb.build(nil, 0, k.recs)
		fns := []func(){
			func() { batch, _ = e.AppendBatch(batch[:0], 0, k.recs, BatchOptions{Codec: k.c}) },
			func() { peer = fb.build(peer[:0], 0, k.recs) },
		}
		if lib := codecLib(k.c); lib != nil {
			dst := make([]byte, 0, 2*len(k.area))
			area := slices.Clone(k.area)
			fns = append(fns, func() { dst = lib(dst, k.area) }, func() {
				area, _ = appendRecords(area[:0], k.recs, k.recs[0].Timestamp, offsetDeltas{})
			})
		}
		reportPeer(b, BatchHeaderSize+len(k.area), benchutil.Alternate(b, fns...))
		b.ReportMetric(float64(len(k.area))/float64(len(batch)-BatchHeaderSize), "ratio")
	})
}

// BenchmarkDecodeCodec: a 1,000-record batch of each codec decoded into
// records (CRC check, decompression, every record parsed and delivered)
// against franz-go's consumer doing the same (franzReader), alternately
// in the same run, and the codec library alone decompressing the same
// payload (the ceiling). MB/s counts the uncompressed batch.
func BenchmarkDecodeCodec(b *testing.B) {
	eachCodec(b, allCodecs, func(b *testing.B, k *codecCase) {
		var d Decoder
		var sum, peerSum int
		fn := func(r *Record) bool { sum += len(r.Value); return true }
		fr := franzReader{dec: kgo.DefaultDecompressor()}
		peerFn := func(r *kmsg.Record) { peerSum += len(r.Value) }
		fns := []func(){
			func() { // the scanner's CRC check is part of decoding a batch
				s := NewBytesScanner(k.batch, "b")
				s.Next()
				if err := d.Records(s.Batch(), fn); err != nil {
					b.Fatal(err)
				}
			},
			func() {
				if !fr.records(k.batch, peerFn) {
					b.Fatal("franz-go cannot read the batch")
				}
			},
		}
		if k.c != None {
			dst := make([]byte, 0, 2*len(k.area))
			fns = append(fns, libDecompress(k.c, &dst, k.batch[BatchHeaderSize:]))
		}
		reportPeer(b, BatchHeaderSize+len(k.area), benchutil.Alternate(b, fns...))
		if sum != peerSum {
			b.Fatalf("values: %d bytes, franz-go %d", sum, peerSum)
		}
	})
}

// libDecompress is the codec library alone decompressing payload into
// *dst (for LZ4 and snappy, their block decoders on the framed blocks).
func libDecompress(c Codec, dst *[]byte, payload []byte) func() {
	if c == LZ4 || c == Snappy {
		return func() { *dst = libBlocks(c, *dst, payload) }
	}
	unlib := codecUnlib(c)
	return func() { *dst = unlib(*dst, payload) }
}
