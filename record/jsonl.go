package record

// AppendJSON appends r as one SPEC §3 jsonl object (no newline):
// {"offset":42,"timestamp":1764410400000,"key":"k1","value":"v1","headers":[["h","x"]]}.
// key/value are null when null; bytes that are not valid UTF-8 are written
// as "key_b64"/"value_b64" in standard base64.
func AppendJSON(dst []byte, r *Record) []byte {
	return dst
}
