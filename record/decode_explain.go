package record

import "fmt"

// parseRecord parses one V2 record at the start of data into d.rec and
// returns the bytes after it, or says why the record is malformed. It is
// the slow, explaining twin of fastRecord, run when fastRecord fails.
func (d *Decoder) parseRecord(data []byte, h *BatchHeader) ([]byte, string) {
	length, n := readVarint32(data)
	if n <= 0 {
		return nil, "bad record length varint"
	}
	if length < 0 || int(length) > len(data)-n {
		return nil, fmt.Sprintf("record length %d runs past the %d bytes left", length, len(data)-n)
	}
	body := data[n : n+int(length)]
	rest := data[n+int(length):]
	if len(body) < 1 {
		return nil, "empty record"
	}
	p := body[1:] // skip the attributes byte
	tsDelta, n := readVarint64(p)
	if n <= 0 {
		return nil, "bad timestamp delta varint"
	}
	p = p[n:]
	offDelta, n := readVarint32(p)
	if n <= 0 {
		return nil, "bad offset delta varint"
	}
	p = p[n:]
	r := &d.rec
	r.Offset = h.BaseOffset + int64(offDelta)
	r.Timestamp = h.BaseTimestamp + tsDelta
	if h.LogAppendTime() {
		r.Timestamp = h.MaxTimestamp
	}
	var reason string
	if r.Key, p, reason = readBytesField(p, "key"); reason != "" {
		return nil, reason
	}
	if r.Value, p, reason = readBytesField(p, "value"); reason != "" {
		return nil, reason
	}
	if p, reason = d.parseHeaders(p); reason != "" {
		return nil, reason
	}
	if len(p) != 0 {
		return nil, fmt.Sprintf("%d bytes left inside the record after its headers", len(p))
	}
	return rest, ""
}

// readBytesField reads a varint length (-1 = null) and that many bytes.
func readBytesField(p []byte, what string) ([]byte, []byte, string) {
	l, n := readVarint32(p)
	if n <= 0 {
		return nil, nil, "bad " + what + " length varint"
	}
	p = p[n:]
	if l == -1 {
		return nil, p, ""
	}
	if l < 0 || int(l) > len(p) {
		return nil, nil, fmt.Sprintf("%s length %d is invalid for the %d bytes left", what, l, len(p))
	}
	return p[:l:l], p[l:], ""
}

// parseHeaders reads the header count and headers into d.rec.Headers.
func (d *Decoder) parseHeaders(p []byte) ([]byte, string) {
	count, n := readVarint32(p)
	if n <= 0 {
		return nil, "bad header count varint"
	}
	p = p[n:]
	if count < 0 || int(count) > len(p)/2 {
		return nil, fmt.Sprintf("header count %d is invalid for the %d bytes left", count, len(p))
	}
	hs := d.headers[:0]
	for j := 0; j < int(count); j++ {
		kl, n := readVarint32(p)
		if n <= 0 || kl < 0 || int(kl) > len(p)-n {
			return nil, fmt.Sprintf("header %d: bad key length", j)
		}
		key := p[n : n+int(kl)]
		p = p[n+int(kl):]
		var val []byte
		var reason string
		if val, p, reason = readBytesField(p, "header value"); reason != "" {
			return nil, fmt.Sprintf("header %d: %s", j, reason)
		}
		hs = append(hs, Header{Key: d.headerKey(j, key), Value: val})
	}
	d.headers = hs
	d.rec.Headers = hs
	if count == 0 {
		d.rec.Headers = nil
	}
	return p, ""
}

// headerKey returns key as a string, reusing the previous record's string
// for header j when the bytes are equal.
func (d *Decoder) headerKey(j int, key []byte) string {
	if j < len(d.keys) && d.keys[j] == string(key) {
		return d.keys[j]
	}
	s := string(key)
	if j < len(d.keys) {
		d.keys[j] = s
	} else if j == len(d.keys) && j < 64 {
		d.keys = append(d.keys, s)
	}
	return s
}
