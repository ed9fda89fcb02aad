package compression

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// ErrTooBig is the cause when a payload inflates past the decoder's bound.
var ErrTooBig = errors.New("decompressed size exceeds the bound")

// Decompressors holds a Decoder's reusable decompression state.
type Decompressors struct {
	gz   *gzip.Reader
	zstd *zstd.Decoder
	// zstdLimit is the bound zstd was created with
	zstdLimit int
	rd        bytes.Reader
	inf       *inflater
}

// decompress inflates src (a records area or legacy wrapper value) into
// dst[:0], at most limit bytes. magic selects the LZ4 header-checksum rule.
func (d *Decompressors) Decompress(dst, src []byte, codec Codec, magic int8, limit int) ([]byte, error) {
	if codec == None || !codec.Valid() {
		return dst[:0], fmt.Errorf("unknown compression codec id %d", int8(codec))
	}
	return codecs[codec].decompress(d, dst[:0], src, magic, limit)
}

// gunzip inflates with the one-shot inflater and, where it declines,
// with klauspost's reader.
func (d *Decompressors) gunzip(dst, src []byte, limit int) ([]byte, error) {
	if d.inf == nil {
		d.inf = new(inflater)
	}
	out, declined := d.inf.gunzipMember(dst, src, limit)
	if declined == nil {
		return out, nil
	}
	dst = out
	d.rd.Reset(src)
	var err error
	if d.gz == nil {
		d.gz, err = gzip.NewReader(&d.rd)
	} else {
		err = d.gz.Reset(&d.rd)
	}
	if err != nil {
		return dst, fmt.Errorf("gzip: %w", err)
	}
	return readBounded(dst, d.gz, limit, "gzip")
}

// readBounded reads r to its end into dst, failing past limit bytes.
func readBounded(dst []byte, r io.Reader, limit int, what string) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = grow(dst, max(32<<10, cap(dst)))
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst[:0], ErrTooBig
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:0], fmt.Errorf("%s: %w", what, err)
		}
	}
}

// unsnappy accepts both snappy-java's xerial framing and a bare raw block.
func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialHeader[:8]) {
		return appendSnappyBlock(dst, src, limit)
	}
	if len(src) < len(xerialHeader) {
		return dst, errors.New("snappy: short xerial header")
	}
	for src = src[len(xerialHeader):]; len(src) > 0; {
		if len(src) < 4 {
			return dst, errors.New("snappy: truncated xerial block length")
		}
		n := binary.BigEndian.Uint32(src)
		if uint64(n) > uint64(len(src)-4) {
			return dst, fmt.Errorf("snappy: xerial block of %d bytes runs past the end", n)
		}
		var err error
		if dst, err = appendSnappyBlock(dst, src[4:4+n], limit); err != nil {
			return dst, err
		}
		src = src[4+n:]
	}
	return dst, nil
}

// appendSnappyBlock appends the raw snappy block's content to dst. Its
// claimed length is checked against what the block's bytes can hold
// (maxUnsnappied) before a buffer of that length is made.
func appendSnappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return dst, fmt.Errorf("snappy: %w", err)
	}
	_, head := binary.Uvarint(block)
	if most := maxUnsnappied(len(block) - head); n > most {
		return dst, fmt.Errorf("snappy: a block of %d bytes claims %d bytes uncompressed, more than it can hold (%d)", len(block), n, most)
	}
	if n > limit-len(dst) {
		return dst, ErrTooBig
	}
	at := len(dst)
	dst = grow(dst, n)[:at+n]
	if _, err := s2.Decode(dst[at:], block); err != nil {
		return dst[:at], fmt.Errorf("snappy: %w", err)
	}
	return dst, nil
}

// maxUnsnappied is the most bytes n bytes of snappy elements decode to.
// A literal yields at most a byte per byte of it, a copy at most 64 bytes
// per 3 (copy-1: 2 bytes for at most 11, copy-2: 3 for 64, copy-4: 5 for
// 64), so no element yields more than 64/3 bytes per byte. S2's repeat
// codes, which s2.Decode also reads, are not snappy and may be declined.
func maxUnsnappied(n int) int { return 64 * n / 3 }

// unzstd decodes src's zstd frames, its content size claims checked
// first (checkZstdClaims).
func (d *Decompressors) unzstd(dst, src []byte, limit int) ([]byte, error) {
	if err := checkZstdClaims(src); err != nil {
		return dst, err
	}
	if d.zstd == nil || d.zstdLimit != limit {
		if d.zstd != nil {
			d.zstd.Close()
		}
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(limit)))
		if err != nil {
			return dst, fmt.Errorf("zstd: %w", err)
		}
		d.zstd, d.zstdLimit = dec, limit
	}
	out, err := d.zstd.DecodeAll(src, dst)
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return dst, ErrTooBig
		}
		return dst, fmt.Errorf("zstd: %w", err)
	}
	if len(out) > limit {
		return out[:0], ErrTooBig
	}
	return out, nil
}
