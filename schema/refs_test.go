package schema

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// TestReferences: an Avro schema using a named type of another subject,
// and a .proto importing another, resolved through the references.
func TestReferences(t *testing.T) {
	c, reg := newCodecs(t)
	if _, _, err := reg.RegisterSchema("addr", sr.Schema{Schema: `{"type":"record","name":"Addr","namespace":"t","fields":[{"name":"city","type":"string"}]}`}); err != nil {
		t.Fatal(err)
	}
	id, _, err := reg.RegisterSchema("p-value", sr.Schema{
		Schema:     `{"type":"record","name":"P","namespace":"t","fields":[{"name":"home","type":"t.Addr"}]}`,
		References: []sr.SchemaReference{{Name: "t.Addr", Subject: "addr", Version: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := c.Encode("p", false, []byte(`{"home":{"city":"Oslo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if out, got, problem, err := c.AppendJSON(nil, p); err != nil || problem != "" || got != id || string(out) != `{"home":{"city":"Oslo"}}` {
		t.Fatalf("avro reference: %s %q %v", out, problem, err)
	}
	if _, _, err := reg.RegisterSchema("common.proto", sr.Schema{Type: sr.TypeProtobuf, Schema: `syntax = "proto3"; package c; message Money { int64 cents = 1; }`}); err != nil {
		t.Fatal(err)
	}
	pid, _, err := reg.RegisterSchema("pay-value", sr.Schema{Type: sr.TypeProtobuf,
		Schema:     `syntax = "proto3"; package p; import "common.proto"; message Pay { c.Money amount = 1; }`,
		References: []sr.SchemaReference{{Name: "common.proto", Subject: "common.proto", Version: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Pay{amount: Money{cents: 150}}: field 1, length 3, field 1 varint 150
	data := []byte{0, 0, 0, 0, byte(pid), 0, 0x0a, 3, 0x08, 0x96, 0x01}
	if out, _, problem, err := c.AppendJSON(nil, data); err != nil || problem != "" || string(out) != `{"amount":{"cents":"150"}}` {
		t.Fatalf("proto import: %s %q %v", out, problem, err)
	}
}

// TestTopicDeleted: the _schemas topic's folding: a later version, a
// soft-deleted one (still decoded, with a note), a tombstone, other key
// types ignored.
func TestTopicDeleted(t *testing.T) {
	st := memlog.New(memlog.Options{})
	if err := st.CreateTopic(TopicName); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Partition(TopicName, 0)
	put := func(key, val string) {
		var v []byte
		if val != "" {
			v = []byte(val)
		}
		if _, err := l.Append([]record.Record{{Key: []byte(key), Value: v}}); err != nil {
			t.Fatal(err)
		}
	}
	s1 := `{"type":"record","name":"A","fields":[{"name":"n","type":"int"}]}`
	put(`{"keytype":"NOOP","magic":0}`, `{}`)
	put(`{"keytype":"SCHEMA","subject":"a-value","version":1,"magic":1}`, `{"subject":"a-value","version":1,"id":5,"schema":`+quote(s1)+`,"deleted":false}`)
	put(`{"keytype":"SCHEMA","subject":"a-value","version":2,"magic":1}`, `{"subject":"a-value","version":2,"id":6,"schema":"\"string\"","deleted":false}`)
	put(`{"keytype":"SCHEMA","subject":"a-value","version":2,"magic":1}`, "") // tombstone of version 2
	put(`{"keytype":"SCHEMA","subject":"a-value","version":1,"magic":1}`, `{"subject":"a-value","version":1,"id":5,"schema":`+quote(s1)+`,"deleted":true}`)
	c := New(Options{Source: NewTopic(st, func() int64 { return time.Now().UnixMilli() })})
	out, _, problem, err := c.AppendJSON(nil, []byte{0, 0, 0, 0, 5, 0x54})
	if err != nil || string(out) != `{"n":42}` || !strings.Contains(problem, "version 1 of a-value was deleted") {
		t.Fatalf("deleted version: %s %q %v", out, problem, err)
	}
	if subj, err := c.Subjects(); err != nil || len(subj) != 0 {
		t.Fatalf("subjects with every version deleted: %v %v", subj, err)
	}
	if ok, err := c.HasSubject("a", false); ok || err != nil {
		t.Fatalf("a subject with every version deleted is not written with: %v %v", ok, err)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
