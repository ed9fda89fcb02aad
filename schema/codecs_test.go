package schema

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

const userAvro = `{"type":"record","name":"User","namespace":"t","fields":[
 {"name":"name","type":"string"},
 {"name":"age","type":["null","int"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
 {"name":"addr","type":["null",{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}],"default":null}
]}`

const userProto = `syntax = "proto3";
package t;
message Other { string x = 1; }
message Outer {
  message Inner { string name = 1; int64 n = 2; }
  Inner inner = 1;
}`

func newCodecs(t *testing.T, opts ...srfake.Option) (*Codecs, *srfake.Registry) {
	t.Helper()
	reg := srfake.New(opts...)
	t.Cleanup(reg.Close)
	src, err := NewRegistry(RegistryOptions{URLs: []string{reg.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Source: src, Timeout: 2 * time.Second}), reg
}

func TestAvroRoundTrip(t *testing.T) {
	c, reg := newCodecs(t)
	id, _, err := reg.RegisterSchema("users-value", sr.Schema{Schema: userAvro})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"name":"ann","age":7,"tags":["x","y"],"price":"-12.05","kind":"B","addr":{"city":"Oslo"}}`
	p, ok, err := c.Encode("users", false, []byte(in))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	out, gotID, problem, err := c.AppendJSON(nil, p)
	if err != nil || problem != "" || gotID != id {
		t.Fatal(gotID, problem, err)
	}
	if string(out) != in {
		t.Fatalf("got  %s\nwant %s", out, in)
	}
	// defaults fill absent fields
	p, _, err = c.Encode("users", false, []byte(`{"name":"b","tags":[],"price":"1","kind":"A"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _, _, _ = c.AppendJSON(nil, p)
	if want := `{"name":"b","age":null,"tags":[],"price":"1.00","kind":"A","addr":null}`; string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

func TestAvroMisfitNamesPath(t *testing.T) {
	c, reg := newCodecs(t)
	if _, _, err := reg.RegisterSchema("users-value", sr.Schema{Schema: userAvro}); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.Encode("users", false, []byte(`{"name":"ann","tags":["x",3],"price":"1","kind":"A"}`))
	var fe *FieldError
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Path != "$.tags[1]" {
		t.Fatalf("err %v", err)
	}
	if _, ok, err := c.Encode("other", false, []byte(`{}`)); ok || err != nil {
		t.Fatalf("a topic without subject: ok %v err %v", ok, err)
	}
}

func TestProtobufIndexes(t *testing.T) {
	c, reg := newCodecs(t)
	id, _, err := reg.RegisterSchema("p-value", sr.Schema{Schema: userProto, Type: sr.TypeProtobuf})
	if err != nil {
		t.Fatal(err)
	}
	// Outer.Inner is message index [1, 0]: field 1 "z", field 2 = 5
	data := []byte{0x0a, 1, 'z', 0x10, 5}
	p, _ := header.AppendEncode(nil, id, []int{1, 0})
	out, _, problem, err := c.AppendJSON(nil, append(p, data...))
	if err != nil || problem != "" || string(out) != `{"name":"z","n":"5"}` {
		t.Fatalf("%s %q %v", out, problem, err)
	}
	// the first message, short form and long form
	for _, h := range [][]byte{{0}, {2, 0}} {
		p := append(append([]byte{0, 0, 0, 0, byte(id)}, h...), 0x0a, 1, 'q')
		out, _, problem, err := c.AppendJSON(nil, p)
		if err != nil || problem != "" || string(out) != `{"x":"q"}` {
			t.Fatalf("%x: %s %q %v", h, out, problem, err)
		}
	}
}

func TestJSONSchema(t *testing.T) {
	c, reg := newCodecs(t)
	if _, _, err := reg.RegisterSchema("j-value", sr.Schema{Type: sr.TypeJSON,
		Schema: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`}); err != nil {
		t.Fatal(err)
	}
	p, ok, err := c.Encode("j", false, []byte(`{ "n": 3 }`))
	if err != nil || !ok {
		t.Fatal(err)
	}
	out, _, _, _ := c.AppendJSON(nil, p)
	if string(out) != `{"n":3}` {
		t.Fatalf("%s", out)
	}
	_, _, err = c.Encode("j", false, []byte(`{"n":"x"}`))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "$.n" {
		t.Fatalf("err %v", err)
	}
}

func TestUnknownAndDown(t *testing.T) {
	c, reg := newCodecs(t)
	_, _, problem, err := c.AppendJSON(nil, []byte{0, 0, 0, 0, 99, 1})
	if err != nil || !strings.Contains(problem, "not found") {
		t.Fatalf("%q %v", problem, err)
	}
	reg.Close()
	_, _, _, err = c.AppendJSON(nil, []byte{0, 0, 0, 0, 98, 1})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("registry down: %v", err)
	}
}

func TestBasicAuth(t *testing.T) {
	reg := srfake.New(srfake.WithAuth("Basic dTpw")) // u:p
	defer reg.Close()
	for _, pass := range []string{"p", "wrong"} {
		src, _ := NewRegistry(RegistryOptions{URLs: []string{reg.URL()}, User: "u", Password: pass})
		_, err := src.Subjects(t.Context())
		if (err == nil) != (pass == "p") {
			t.Fatalf("password %s: %v", pass, err)
		}
	}
}
