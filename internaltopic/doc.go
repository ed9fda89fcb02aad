// Package internaltopic owns the schemas of Kafka's internal topics: it
// decodes the keys and values a broker writes to __consumer_offsets
// (offset commits, classic group metadata, the consumer group records of
// KIP-848), __transaction_state (transaction metadata) and
// __cluster_metadata (KRaft metadata records), renders them as JSON
// objects, and folds them into the state they describe (the committed
// offsets of consumer groups, the topic configurations of a KRaft cluster).
//
// The layouts follow Kafka's published message schemas
// (group-coordinator/.../common/message, transaction-coordinator/...,
// metadata/.../common/metadata): franz-go's kmsg types decode the classic
// group and transaction records; the metadata and KIP-848 records, which
// kmsg does not have, are decoded here from a table of their fields
// (schemas.go) by one reader of Kafka's flexible-version encoding (compact
// strings and arrays, unsigned varints, tagged fields).
//
// A decoded record is one JSON object:
//
//	{"offset":7,"timestamp":1700000000000,"type":"offset_commit",
//	 "key":{"version":1,"group":"g","topic":"t","partition":0},
//	 "value":{"version":3,"offset":42,"leaderEpoch":0,"metadata":"","commitTimestamp":1700000000000}}
//
// Field names are the schemas' names in lower camel case, as Kafka's JSON
// converters print them; UUIDs are Kafka's base64url form. A null value
// (a tombstone) is "value":null: the deletion of that key. A record whose
// bytes do not decode is rendered with "error" and its raw key and value in
// base64, never dropped.
package internaltopic
