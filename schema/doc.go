// Package schema owns SPEC §11's schema-encoded payloads: where schemas
// come from (a Schema Registry over its REST API, or the registry's own
// `_schemas` topic read through partlog), their cache by ID, rendering
// Avro, Protobuf and JSON Schema payloads in the Confluent wire format as
// JSON, and encoding JSON into that wire format with a subject's latest
// schema.
//
// The codecs are the ecosystem's: hamba/avro (schema parsing, binary
// primitives), protocompile with google.golang.org/protobuf (run-time
// .proto compilation, dynamic messages, protojson), and
// santhosh-tekuri/jsonschema; franz-go's pkg/sr is the registry client and
// the wire format's header.
//
// IDs never change meaning: a schema, or the failure to find one, is
// cached by ID for the life of a Codecs, so a record always renders to the
// same bytes (stable positions depend on it). A source that does not
// answer is not a failure of the ID: the lookup is tried again next time.
package schema
