package schema

import (
	"encoding/json"
	"testing"

	"github.com/hamba/avro/v2"
)

const benchAvro = `{"type":"record","name":"Order","fields":[
 {"name":"id","type":"long"},{"name":"customer","type":"string"},{"name":"item","type":"string"},
 {"name":"qty","type":"int"},{"name":"price","type":"double"},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},{"name":"ts","type":"long"}]}`

func benchPayload(b *testing.B) (*avroCodec, avro.Schema, []byte) {
	c, err := parseAvro(benchAvro, nil)
	if err != nil {
		b.Fatal(err)
	}
	note := "leave at the door"
	data, err := avro.Marshal(c.s, map[string]any{"id": int64(42), "customer": "customer-000042", "item": `widget "deluxe"`,
		"qty": int32(3), "price": 12.375, "note": &note, "tags": []string{"a", "bb"}, "ts": int64(1764410400042)})
	if err != nil {
		b.Fatal(err)
	}
	return c, c.s, data
}

// BenchmarkAvroToJSON: the schema walk writing JSON, against hamba/avro
// decoding into map[string]any and encoding/json writing it; the ratio
// is logged (-v).
func BenchmarkAvroToJSON(b *testing.B) {
	c, s, data := benchPayload(b)
	var walk, mapJSON float64
	b.Run("walk", func(b *testing.B) {
		buf := make([]byte, 0, 512)
		for b.Loop() {
			var err error
			if buf, err = c.appendJSON(buf[:0], data); err != nil {
				b.Fatal(err)
			}
		}
		walk = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("hamba_map_encoding_json", func(b *testing.B) {
		for b.Loop() {
			var v map[string]any
			if err := avro.Unmarshal(s, data, &v); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
		mapJSON = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	if walk > 0 {
		b.Logf("hamba into map + encoding/json takes %.1fx the walk's time", mapJSON/walk)
	}
}
