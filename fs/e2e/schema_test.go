package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/record"
)

const orderAvro = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"long"},
 {"name":"item","type":"string"},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}
]}`

// putSchema appends a registry record to the store's _schemas topic, as
// Schema Registry writes it.
func putSchema(t *testing.T, st *logstore.Store, subject string, version, id int, typ, text string) {
	t.Helper()
	if err := st.CreateTopic("_schemas"); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
	l, err := st.Partition("_schemas", 0)
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf(`{"keytype":"SCHEMA","subject":%q,"version":%d,"magic":1}`, subject, version)
	v := map[string]any{"subject": subject, "version": version, "id": id, "schema": text, "deleted": false}
	if typ != "" {
		v["schemaType"] = typ
	}
	val, _ := json.Marshal(v)
	if _, err := l.Append([]record.Record{{Key: []byte(key), Value: val}}); err != nil {
		t.Fatal(err)
	}
}

// wire frames data in the wire format with schema id.
func wire(id int, data []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), data...)
}

type order struct {
	ID    int64   `avro:"id"`
	Item  string  `avro:"item"`
	Note  *string `avro:"note"`
	Total []byte  `avro:"total"`
}

// TestSchemaAvroDataDir: Avro values written by hamba/avro's own
// marshaller (not the mount's encoder), with schemas in the data
// directory's _schemas topic, read as JSON through log.jsonl and log;
// unknown IDs and plain values rendered as before.
func TestSchemaAvroDataDir(t *testing.T) {
	e := newEnv(t, mountOpt{schemasOn: true})
	putSchema(t, e.st, "orders-value", 1, 3, "", orderAvro)
	s := avro.MustParse(orderAvro)
	note := "gift"
	var recs []record.Record
	for i, o := range []order{{1, "tea", nil, []byte{0x04, 0xd2}}, {2, "cup \"x\"", &note, []byte{0xff, 0x38}}} {
		b, err := avro.Marshal(s, o)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, record.Record{Value: wire(3, b), Timestamp: int64(1000 + i)})
	}
	recs = append(recs,
		record.Record{Value: []byte("plain text"), Timestamp: 1002},
		record.Record{Value: wire(77, []byte{2, 4}), Timestamp: 1003},
		record.Record{Key: wire(3, []byte{1}), Value: nil, Timestamp: 1004}, // a key that does not decode
	)
	if err := e.st.CreateTopic("orders"); err != nil {
		t.Fatal(err)
	}
	l, _ := e.st.Partition("orders", 0)
	if _, err := l.Append(recs); err != nil {
		t.Fatal(err)
	}
	got := e.Sh("cat orders/0/log.jsonl")
	want := `{"offset":0,"timestamp":1000,"key":null,"value":{"id":1,"item":"tea","note":null,"total":"12.34"},"value_schema_id":3,"headers":[]}
{"offset":1,"timestamp":1001,"key":null,"value":{"id":2,"item":"cup \"x\"","note":"gift","total":"-2.00"},"value_schema_id":3,"headers":[]}
{"offset":2,"timestamp":1002,"key":null,"value":"plain text","headers":[]}
{"offset":3,"timestamp":1003,"key":null,"value":"\u0000\u0000\u0000\u0000M\u0002\u0004","value_error":"schema 77 not found","headers":[]}
`
	if !strings.HasPrefix(got, want) {
		t.Fatalf("log.jsonl:\n%s\nwant:\n%s", got, want)
	}
	last := got[len(want):]
	if !strings.Contains(last, `"key":"\u0000\u0000\u0000\u0000\u0003\u0001","key_error":"schema 3: avro: `) || !strings.Contains(last, `"value":null,"headers":[]}`) {
		t.Fatalf("undecodable key: %s", last)
	}
	plain := e.Sh("cat orders/0/log")
	wantPlain := `{"id":1,"item":"tea","note":null,"total":"12.34"}
{"id":2,"item":"cup \"x\"","note":"gift","total":"-2.00"}
plain text
` + "\x00\x00\x00\x00M\x02\x04\n"
	if plain != wantPlain {
		t.Fatalf("log: %q\nwant %q", plain, wantPlain)
	}
	// st_size equals what a read returns, and positions are stable
	if n := e.Sh("stat -c %s orders/0/log.jsonl"); strings.TrimSpace(n) != fmt.Sprint(len(got)) {
		t.Fatalf("st_size %s, read %d", n, len(got))
	}
	if tail := e.Sh("tail -c +2 orders/0/log.jsonl | head -c 20"); tail != got[1:21] {
		t.Fatalf("tail -c: %q", tail)
	}
	if m := e.Sh("grep schema_errors_total .metrics | grep -v '^#'"); !strings.Contains(m, `kind="unknown"} 1`) || !strings.Contains(m, `kind="undecodable"} 1`) {
		t.Fatalf("metrics: %s", m)
	}
	if n := strings.Count(e.logs.String(), "schema ID the source does not know"); n != 1 {
		t.Fatalf("unknown schema logged %d times", n)
	}
}
