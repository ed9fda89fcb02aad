package compression

import "fmt"

// Codec is a compression codec as stored in bits 0-2 of a batch's attributes.
type Codec int8

// The codecs Kafka knows. Ids 5-7 are invalid on disk.
const (
	None   Codec = 0
	Gzip   Codec = 1
	Snappy Codec = 2
	LZ4    Codec = 3
	Zstd   Codec = 4
)

// codecSpec is everything partfs knows of one codec. The framing fields
// bound what compressing incompressible bytes adds to them: perBlock bytes
// for each started block of block bytes, plus frame bytes once (headers and
// trailers). TestCodecFraming checks the bound against the Compressors.
type codecSpec struct {
	name                   string
	minMagic               int8 // the oldest message format that may use it
	compress               func(c *Compressors, dst, src []byte) ([]byte, error)
	decompress             func(d *Decompressors, dst, src []byte, magic int8, limit int) ([]byte, error)
	block, perBlock, frame int
}

// codecs is the one table of codecs, indexed by attribute id.
var codecs = [...]codecSpec{
	None: {name: "none"},
	Gzip: {name: "gzip", block: 64 << 10, perBlock: 5, frame: 25,
		compress: (*Compressors).gzip,
		decompress: func(d *Decompressors, dst, src []byte, _ int8, limit int) ([]byte, error) {
			return d.gunzip(dst, src, limit)
		}},
	Snappy: {name: "snappy", block: 32 << 10, perBlock: 10, frame: 16,
		compress: func(_ *Compressors, dst, src []byte) ([]byte, error) { return appendXerial(dst, src), nil },
		decompress: func(_ *Decompressors, dst, src []byte, _ int8, limit int) ([]byte, error) {
			return unsnappy(dst, src, limit)
		}},
	LZ4: {name: "lz4", block: 64 << 10, perBlock: 4, frame: 11,
		compress: (*Compressors).kafkaLZ4,
		decompress: func(_ *Decompressors, dst, src []byte, magic int8, limit int) ([]byte, error) {
			return unKafkaLZ4(dst, src, magic, limit)
		}},
	Zstd: {name: "zstd", minMagic: 2, block: 128 << 10, perBlock: 3, frame: 16,
		compress: (*Compressors).zstdEncode,
		decompress: func(d *Decompressors, dst, src []byte, _ int8, limit int) ([]byte, error) {
			return d.unzstd(dst, src, limit)
		}},
}

// noneAlias is the other name Kafka's type accepts for None.
const noneAlias = "uncompressed"

// String returns Kafka's name of the codec ("none", "gzip", ...).
func (c Codec) String() string {
	if c.Valid() {
		return codecs[c].name
	}
	return fmt.Sprintf("unknown(%d)", int8(c))
}

// Names returns the names Parse accepts: "none" and its alias
// "uncompressed", then the other codecs by id.
func Names() []string {
	names := []string{codecs[None].name, noneAlias}
	for _, s := range codecs[None+1:] {
		names = append(names, s.name)
	}
	return names
}

// Parse parses Kafka's codec names "none", "gzip", "snappy", "lz4"
// and "zstd" ("uncompressed" is accepted for "none").
func Parse(name string) (Codec, error) {
	for i, s := range codecs {
		if s.name == name {
			return Codec(i), nil
		}
	}
	if name == noneAlias {
		return None, nil
	}
	return None, fmt.Errorf("record: unknown compression codec %q", name)
}

// MaxFraming bounds the bytes compressing n incompressible bytes with c
// adds to them (0 for None): what a batch planned from uncompressed sizes
// must leave free to stay under a limit once compressed.
func (c Codec) MaxFraming(n int) int {
	if !c.Valid() || c == None {
		return 0
	}
	s := codecs[c]
	return s.frame + s.perBlock*(n/s.block+1)
}

// ValidFor reports whether c is a known codec that messages of format
// magic may use (zstd came with V2 batches).
func (c Codec) ValidFor(magic int8) bool { return c.Valid() && magic >= codecs[c].minMagic }

// Valid reports whether c is one of the known codecs.
func (c Codec) Valid() bool { return c >= 0 && int(c) < len(codecs) }
