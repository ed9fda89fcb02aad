package record

// fastRecord parses one V2 record at the start of data into d.rec and
// returns the bytes after it; ok is false for a malformed record (then
// explainRecord says why). It works on indexes into the record body and
// allocates nothing unless a header key changes.
func (d *Decoder) fastRecord(data []byte, h *BatchHeader) (rest []byte, ok bool) {
	length, n := readVarint32(data)
	if n <= 0 || length < 1 || int(length) > len(data)-n {
		return nil, false
	}
	body := data[n : n+int(length)]
	i := 1 // the attributes byte
	tsDelta, k := readVarint64(body[i:])
	if k <= 0 {
		return nil, false
	}
	i += k
	offDelta, k := readVarint32(body[i:])
	if k <= 0 {
		return nil, false
	}
	i += k
	r := &d.rec
	r.Offset = h.BaseOffset + int64(offDelta)
	r.Timestamp = h.BaseTimestamp + tsDelta
	if h.Attributes&attrLogAppendTime != 0 {
		r.Timestamp = h.MaxTimestamp
	}
	if r.Key, i = bytesAt(body, i); i < 0 {
		return nil, false
	}
	if r.Value, i = bytesAt(body, i); i < 0 {
		return nil, false
	}
	if i < len(body) && body[i] == 0 {
		i++
		r.Headers = nil
	} else if i, ok = d.headersAt(body, i); !ok {
		return nil, false
	}
	return data[n+int(length):], i == len(body)
}

// bytesAt reads a varint length (-1 = null) and the bytes at body[i:];
// next < 0 on failure.
func bytesAt(body []byte, i int) (v []byte, next int) {
	l, k := readVarint32(body[i:])
	if k <= 0 || l < -1 {
		return nil, -1
	}
	i += k
	if l == -1 {
		return nil, i
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
	return i, true
}
