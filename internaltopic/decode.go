package internaltopic

import (
	"encoding/base64"
	"strconv"

	"github.com/partfs/partfs/record"
)

// Topic says which internal topic's schemas a partition's records follow.
type Topic int

const (
	None             Topic = iota // not an internal topic
	ConsumerOffsets               // __consumer_offsets
	TransactionState              // __transaction_state
	ClusterMetadata               // __cluster_metadata
)

// Topic names.
const (
	ConsumerOffsetsName  = "__consumer_offsets"
	TransactionStateName = "__transaction_state"
	ClusterMetadataName  = "__cluster_metadata"
)

// ForTopic returns the schemas of the topic named name.
func ForTopic(name string) Topic {
	switch name {
	case ConsumerOffsetsName:
		return ConsumerOffsets
	case TransactionStateName:
		return TransactionState
	case ClusterMetadataName:
		return ClusterMetadata
	}
	return None
}

// Decoded is one record's key and value decoded.
type Decoded struct {
	Type  string // offset_commit, group_metadata, transaction_metadata, or a metadata record's name
	Key   any    // Object, or nil where the topic has no keys (__cluster_metadata)
	Value any    // Object, or nil for a tombstone
}

// Decode decodes key and value of a record of topic t.
func (t Topic) Decode(key, value []byte) (Decoded, error) {
	switch t {
	case ConsumerOffsets:
		return decodeOffsets(key, value)
	case TransactionState:
		return decodeTxn(key, value)
	case ClusterMetadata:
		return decodeMetadata(value)
	}
	return Decoded{}, errorf("not an internal topic")
}

// AppendJSON appends r decoded as one JSON object (no line end):
// offset, timestamp, type, key, value; or, when r does not decode, offset,
// timestamp, error, key_b64, value_b64.
func (t Topic) AppendJSON(dst []byte, r *record.Record) []byte {
	dst = append(dst, `{"offset":`...)
	dst = strconv.AppendInt(dst, r.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, r.Timestamp, 10)
	d, err := t.Decode(r.Key, r.Value)
	if err != nil {
		dst = append(dst, `,"error":`...)
		dst = appendString(dst, err.Error())
		dst = append(dst, `,"key_b64":`...)
		dst = appendB64(dst, r.Key)
		dst = append(dst, `,"value_b64":`...)
		dst = appendB64(dst, r.Value)
		return append(dst, '}')
	}
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, d.Type)
	dst = append(dst, `,"key":`...)
	dst = appendValue(dst, d.Key)
	dst = append(dst, `,"value":`...)
	dst = appendValue(dst, d.Value)
	return append(dst, '}')
}

func appendB64(dst []byte, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
