package record

// DefaultMaxDecompressed bounds the inflated size of one batch's records.
const DefaultMaxDecompressed = 64 << 20

// Decoder turns batches into records: it decompresses, expands legacy
// wrappers (V0 absolute, V1 relative inner offsets) and applies
// LogAppendTime. It reuses its buffers (one Decoder per goroutine); the
// uncompressed V2 path allocates nothing per record (header keys are
// strings: a key equal to the previous record's key at the same position
// reuses that string).
type Decoder struct {
	// MaxDecompressed bounds the decompressed size of one batch
	// (0 = DefaultMaxDecompressed).
	MaxDecompressed int

	rec     Record
	headers []Header
	keys    []string // header key cache, by header index
	buf     []byte   // decompressed records
	dec     decompressors
}

func (d *Decoder) limit() int {
	if d.MaxDecompressed > 0 {
		return d.MaxDecompressed
	}
	return DefaultMaxDecompressed
}

// Records calls fn for each record of b in order until fn returns false. The
// *Record and its slices are valid only during the call. Records of a control
// batch are passed too (see BatchHeader.IsControl). A failure is a
// *CorruptionError naming the batch's file and position; records before the
// failing one have been passed to fn.
func (d *Decoder) Records(b *Batch, fn func(*Record) bool) error {
	if b.Header.Magic >= 2 {
		return d.recordsV2(b, fn)
	}
	return d.recordsLegacy(b, fn)
}

// Decompressed returns b's records area (V2) or wrapper value (V0/V1)
// decompressed, in the Decoder's buffer (valid until its next use).
func (d *Decoder) Decompressed(b *Batch) ([]byte, error) {
	if b.Header.Magic >= 2 {
		data, _, err := d.v2Data(b)
		return data, err
	}
	m, _, reason := parseLegacy(b.Raw, false)
	if reason != "" {
		return nil, corruptf(b.File, b.Pos, "%s", reason)
	}
	if m.codec == None {
		return m.value, nil
	}
	return d.wrapperData(b, &m)
}

// v2Data returns the uncompressed records area of a V2 batch.
func (d *Decoder) v2Data(b *Batch) ([]byte, bool, error) {
	if len(b.Raw) < BatchHeaderSize {
		return nil, false, corruptf(b.File, b.Pos, "batch of %d bytes is shorter than its header", len(b.Raw))
	}
	data := b.Raw[BatchHeaderSize:]
	codec := b.Header.Codec()
	if codec == None || len(data) == 0 && b.Header.NumRecords == 0 {
		return data, false, nil
	}
	if !codec.valid() {
		return nil, false, corruptf(b.File, b.Pos, "unknown compression codec id %d", int8(codec))
	}
	out, err := d.dec.decompress(d.buf, data, codec, 2, d.limit())
	d.buf = out[:0]
	if err != nil {
		return nil, false, &CorruptionError{File: b.File, Pos: b.Pos, Reason: "cannot decompress " + codec.String() + " records", Err: err}
	}
	return out, true, nil
}

func (d *Decoder) recordsV2(b *Batch, fn func(*Record) bool) error {
	data, _, err := d.v2Data(b)
	if err != nil {
		return err
	}
	h := &b.Header
	for i := int32(0); i < h.NumRecords; i++ {
		n, used, stop := d.simpleRecords(data, h, h.NumRecords-i, fn)
		if data, i = data[used:], i+n; stop {
			return nil
		}
		if i == h.NumRecords {
			break
		}
		if len(data) == 0 {
			return corruptf(b.File, b.Pos, "batch declares %d records but its bytes hold only %d", h.NumRecords, i)
		}
		rest, ok := d.fastRecord(data, h)
		if !ok {
			_, reason := d.parseRecord(data, h)
			return corruptf(b.File, b.Pos, "record %d of %d: %s", i, h.NumRecords, reason)
		}
		data = rest
		if !fn(&d.rec) {
			return nil
		}
	}
	if len(data) != 0 {
		return corruptf(b.File, b.Pos, "incorrect declared batch size: %d bytes left after %d records", len(data), h.NumRecords)
	}
	return nil
}
