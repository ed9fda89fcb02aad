// Package record owns Kafka's message formats and what partfs makes of
// them:
//   - V2 record batches, written (Encoder, AppendBatches, the cleaner's
//     re-encoding) and read (Scanner, Decoder, the header-only
//     RecordPrefix), and the legacy V0/V1 message sets (read only);
//   - a batch's codec (the codecs themselves are package compression),
//     CRCs, validation and the offset order of a segment's batches;
//   - the one corruption vocabulary of stored data (CorruptionError,
//     ErrCorruption, ErrTruncated);
//   - the lines of a plain `log` write made into records (Lines,
//     AppendLineRecords); their JSON form is package jsonl;
//   - Record.Clone, a decoded record kept past its decoder.
//
// It imports only package compression of partfs.
package record

import "bytes"

// Header is one record header. A nil Value is a null header value.
type Header struct {
	Key   string
	Value []byte
}

// Record is one logical record. A nil Key or Value is null; a nil Value is a
// tombstone. When a Record is produced by a decoder its slices may alias the
// decoder's buffers and are valid only until the decoder moves on.
type Record struct {
	Offset    int64
	Timestamp int64 // epoch ms; -1 for V0 messages
	Key       []byte
	Value     []byte
	Headers   []Header
}

// Clone returns a copy of r that shares no memory with it: a record a
// decoder produced, kept past the decoder's next step. Null (nil) keys,
// values and header values stay null; no headers is nil Headers.
func (r *Record) Clone() Record {
	c := Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)}
	if len(r.Headers) > 0 {
		c.Headers = make([]Header, len(r.Headers))
		for i, h := range r.Headers {
			c.Headers[i] = Header{Key: h.Key, Value: bytes.Clone(h.Value)}
		}
	}
	return c
}
