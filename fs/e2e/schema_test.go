package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
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

// TestSchemaAvroWrite: JSON written to log.jsonl and log of a topic with
// a value subject is stored encoded with the latest schema (read back by
// hamba/avro's own unmarshaller); a misfit is EINVAL with nothing of that
// write appended and the field path in the log.
func TestSchemaAvroWrite(t *testing.T) {
	e := newEnv(t, mountOpt{schemasOn: true})
	putSchema(t, e.st, "orders-value", 1, 3, "", `{"type":"record","name":"Old","fields":[{"name":"id","type":"long"}]}`)
	putSchema(t, e.st, "orders-value", 2, 4, "", orderAvro)
	e.Sh("mkdir orders")
	e.Sh(`printf '%s\n' '{"value":{"id":1,"item":"tea","total":"1.50"}}' '{"key":"k","value":{"id":2,"item":"cup","note":"x","total":"-0.01"},"value_schema_id":4}' >> orders/0/log.jsonl`)
	e.Sh(`echo '{"id":3,"item":"pot","note":null,"total":"3"}' >> orders/0/log`)
	e.Sh(`echo '{"value":"stored as it is"}' >> orders/0/log.jsonl`)
	two := t.TempDir() + "/two.jsonl" // one write() of both lines
	if err := os.WriteFile(two, []byte(`{"value":{"id":5,"item":"ok","total":"1"}}`+"\n"+`{"value":{"id":6,"item":7,"total":"1"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := e.Try("cat " + two + " >> orders/0/log.jsonl")
	if err == nil || !strings.Contains(out+err.Error(), "Invalid argument") {
		t.Fatalf("misfit accepted: %s %v", out, err)
	}
	if !strings.Contains(e.logs.String(), "$.item: want a string") {
		t.Fatalf("field path not logged:\n%s", e.logs.String())
	}
	if _, err := e.Try(`echo '{"id":"x"}' >> orders/0/log`); err == nil {
		t.Fatal("misfit plain line accepted")
	}
	l, _ := e.st.Partition("orders", 0)
	var got []string
	segs, release := l.Segments()
	defer release()
	s := avro.MustParse(orderAvro)
	for _, seg := range segs {
		if err := l.Read(seg, 0, func(r *record.Record) bool {
			if r.Value[0] != 0 {
				got = append(got, string(r.Value))
				return true
			}
			if id := binary.BigEndian.Uint32(r.Value[1:5]); id != 4 {
				t.Errorf("schema id %d", id)
			}
			var o order
			if err := avro.Unmarshal(s, r.Value[5:], &o); err != nil {
				t.Fatal(err)
			}
			note := "<nil>"
			if o.Note != nil {
				note = *o.Note
			}
			got = append(got, fmt.Sprintf("%s %d %s %s %x", r.Key, o.ID, o.Item, note, o.Total))
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{" 1 tea <nil> 0096", "k 2 cup x ff", " 3 pot <nil> 012c", "stored as it is"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %q\nwant %q", got, want)
	}
	// @key/K takes and shows the value as JSON too
	if got := e.Sh(`echo '{"id":9,"item":"k","total":"2"}' > orders/0/@key/kk; cat orders/0/@key/kk`); got != `{"id":9,"item":"k","note":null,"total":"2.00"}`+"\n" {
		t.Fatalf("@key: %q", got)
	}
	jl := e.Sh("cat orders/0/log.jsonl")
	if !strings.Contains(jl, `"value":{"id":3,"item":"pot","note":null,"total":"3.00"},"value_schema_id":4`) {
		t.Fatalf("log.jsonl:\n%s", jl)
	}
	if n := strings.TrimSpace(e.Sh("stat -c %s orders/0/log.jsonl")); n != fmt.Sprint(len(jl)) {
		t.Fatalf("st_size %s, read %d", n, len(jl))
	}
}

// TestSchemasDir: .schemas/ lists subjects and versions, reads schema
// texts, and registers what is written to SUBJECT/new in _schemas,
// refusing an Avro schema that is not backward compatible.
func TestSchemasDir(t *testing.T) {
	e := newEnv(t, mountOpt{schemasOn: true})
	putSchema(t, e.st, "orders-value", 1, 3, "", orderAvro)
	if got := e.Sh("ls .schemas; ls .schemas/orders-value"); got != "orders-value\n1\nlatest\nnew\n" {
		t.Fatalf("ls: %q", got)
	}
	if got := e.Sh("cat .schemas/orders-value/latest"); got != orderAvro+"\n" {
		t.Fatalf("latest: %q", got)
	}
	v2 := `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"},{"name":"note","type":["null","string"],"default":null},{"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"qty","type":"int","default":1}]}`
	e.Sh("cat > .schemas/orders-value/new <<'X'\n" + v2 + "\nX")
	if got := e.Sh("ls .schemas/orders-value; cat .schemas/orders-value/2"); got != "1\n2\nlatest\nnew\n"+v2+"\n" {
		t.Fatalf("after register: %q", got)
	}
	// not backward compatible: a new field without a default
	bad := `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"x","type":"int"}]}`
	if out, err := e.Try(`python3 -c 'import sys; f=open(".schemas/orders-value/new","w"); f.write(sys.argv[1]); f.close()' '` + bad + `'`); err == nil {
		t.Fatalf("incompatible schema registered: %s", out)
	}
	if got := e.Sh("ls .schemas/orders-value"); got != "1\n2\nlatest\nnew\n" {
		t.Fatalf("after refusal: %q", got)
	}
	// a written record uses the new latest version (ID 4: the next free)
	e.Sh("mkdir orders")
	e.Sh(`echo '{"id":1,"item":"a","total":"1"}' >> orders/0/log`)
	if got := e.Sh("cat orders/0/log.jsonl"); !strings.Contains(got, `"qty":1},"value_schema_id":4`) {
		t.Fatalf("log.jsonl: %s", got)
	}
}
