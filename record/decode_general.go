package record

// uv2 decodes a 1- or 2-byte varint at b[i] (the common sizes: lengths and
// deltas below 8192). k == 0 sends the caller to the general decoder; it
// is small enough to be inlined.
func uv2(b []byte, i int) (u uint32, k int) {
	if i+1 < len(b) {
		if c := b[i]; c < 0x80 {
			return uint32(c), 1
		}
		if c := b[i+1]; c < 0x80 {
			return uint32(b[i]&0x7f) | uint32(c)<<7, 2
		}
	}
	return 0, 0
}

func zigzag32(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }

// fastRecord parses one V2 record at the start of data into d.rec and
// returns the bytes after it; ok is false for a malformed record (then
// parseRecord says why). It works on indexes into the record body and
// allocates nothing unless a header key changes.
func (d *Decoder) fastRecord(data []byte, h *BatchHeader) (rest []byte, ok bool) {
	var length int32
	u, n := uv2(data, 0)
	if length = zigzag32(u); n == 0 {
		if length, n = readVarint32(data); n <= 0 {
			return nil, false
		}
	}
	if length < 1 || int(length) > len(data)-n {
		return nil, false
	}
	body := data[n : n+int(length)]
	i := 1 // the attributes byte
	var tsDelta int64
	if u, k := uv2(body, i); k > 0 {
		tsDelta, i = int64(zigzag32(u)), i+k
	} else if tsDelta, k = readVarint64(body[i:]); k > 0 {
		i += k
	} else {
		return nil, false
	}
	var offDelta int32
	if u, k := uv2(body, i); k > 0 {
		offDelta, i = zigzag32(u), i+k
	} else if offDelta, k = readVarint32(body[i:]); k > 0 {
		i += k
	} else {
		return nil, false
	}
	r := &d.rec
	r.Offset = h.BaseOffset + int64(offDelta)
	r.Timestamp = h.BaseTimestamp + tsDelta
	if h.Attributes&attrLogAppendTime != 0 {
		r.Timestamp = h.MaxTimestamp
	}
	// key and value: the common lengths inline, the rest through bytesAt
	if u, k := uv2(body, i); k > 0 && u&1 == 0 && int(u>>1) <= len(body)-i-k {
		i += k
		r.Key, i = body[i:i+int(u>>1):i+int(u>>1)], i+int(u>>1)
	} else if k == 1 && u == 1 {
		r.Key, i = nil, i+1
	} else if r.Key, i = bytesAt(body, i); i < 0 {
		return nil, false
	}
	if u, k := uv2(body, i); k > 0 && u&1 == 0 && int(u>>1) <= len(body)-i-k {
		i += k
		r.Value, i = body[i:i+int(u>>1):i+int(u>>1)], i+int(u>>1)
	} else if k == 1 && u == 1 {
		r.Value, i = nil, i+1
	} else if r.Value, i = bytesAt(body, i); i < 0 {
		return nil, false
	}
	if i == len(body)-1 && body[i] == 0 {
		r.Headers = nil
		return data[n+int(length):], true
	}
	if i, ok = d.headersAt(body, i); !ok {
		return nil, false
	}
	return data[n+int(length):], i == len(body)
}

// bytesAt reads a varint length (-1 = null) and the bytes at body[i:];
// next < 0 on failure.
func bytesAt(body []byte, i int) (v []byte, next int) {
	var l int32
	u, k := uv2(body, i)
	if l = zigzag32(u); k == 0 {
		if l, k = readVarint32(body[i:]); k <= 0 {
			return nil, -1
		}
	}
	i += k
	if l < 0 {
		if l == -1 {
			return nil, i
		}
		return nil, -1
	}
	if int(l) > len(body)-i {
		return nil, -1
	}
	return body[i : i+int(l) : i+int(l)], i + int(l)
}

// headersAt reads the header count and headers at body[i:] into d.rec.Headers.
func (d *Decoder) headersAt(body []byte, i int) (int, bool) {
	count, k := readVarint32(body[i:])
	if k <= 0 || count < 0 || int(count) > (len(body)-i)/2 {
		return 0, false
	}
	i += k
	hs := d.headers[:0]
	for j := 0; j < int(count); j++ {
		kl, k := readVarint32(body[i:])
		if k <= 0 || kl < 0 || int(kl) > len(body)-i-k {
			return 0, false
		}
		key := body[i+k : i+k+int(kl)]
		var val []byte
		if val, i = bytesAt(body, i+k+int(kl)); i < 0 {
			return 0, false
		}
		hs = append(hs, Header{Key: d.headerKey(j, key), Value: val})
	}
	d.headers = hs
	d.rec.Headers = hs
	if count == 0 {
		d.rec.Headers = nil
	}
	return i, true
}
