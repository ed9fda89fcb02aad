package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// protoCodec renders and encodes the messages of one .proto schema,
// compiled at run time by protocompile; the messages are
// google.golang.org/protobuf's dynamic messages, rendered by protojson.
type protoCodec struct{ fd protoreflect.FileDescriptor }

// protoMainFile is the name the schema itself is compiled under; its
// references are compiled under their own names (what it imports).
const protoMainFile = "partfs-schema.proto"

// parseProto compiles text, resolving its imports from refs (import name
// to schema text) and the well-known types.
func parseProto(text string, refs map[string]string) (*protoCodec, error) {
	srcs := map[string]string{protoMainFile: text}
	for name, t := range refs {
		srcs[name] = t
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(srcs),
	})}
	files, err := c.Compile(context.Background(), protoMainFile)
	if err != nil {
		return nil, err
	}
	return &protoCodec{fd: files[0]}, nil
}

// message is the message the wire format's indexes name: the path from
// the file's top level down its nested messages.
func (c *protoCodec) message(indexes []int) (protoreflect.MessageDescriptor, error) {
	if len(indexes) == 0 {
		indexes = []int{0}
	}
	msgs := c.fd.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range indexes {
		if i < 0 || i >= msgs.Len() {
			return nil, fmt.Errorf("protobuf: no message at index %v", indexes)
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	return md, nil
}

// protoOut is protojson's rendering: the .proto field names, and fields
// at their defaults shown too, as Schema Registry's own protobuf console
// consumer prints them.
var protoOut = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

func (c *protoCodec) appendJSON(dst []byte, indexes []int, data []byte) ([]byte, error) {
	md, err := c.message(indexes)
	if err != nil {
		return dst, err
	}
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(data, m); err != nil {
		return dst, fmt.Errorf("protobuf %s: %w", md.FullName(), err)
	}
	out, err := protoOut.Marshal(m)
	if err != nil {
		return dst, fmt.Errorf("protobuf %s: %w", md.FullName(), err)
	}
	// protojson's spacing varies between builds on purpose: compact it,
	// so a record always renders to the same bytes.
	var b bytes.Buffer
	b.Grow(len(out))
	if err := json.Compact(&b, out); err != nil {
		return dst, err
	}
	return append(dst, b.Bytes()...), nil
}

// encode encodes the JSON text js as the file's first message; it returns
// the message indexes written before it.
func (c *protoCodec) encode(js []byte) ([]byte, []int, error) {
	md, err := c.message(nil)
	if err != nil {
		return nil, nil, err
	}
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(js, m); err != nil {
		return nil, nil, &FieldError{Path: string(md.FullName()), Reason: err.Error()}
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return b, []int{0}, err
}
