package internaltopic

import (
	"bytes"
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Key versions of __consumer_offsets (the int16 each key starts with).
const (
	keyOffsetCommitV0  = 0
	keyOffsetCommitV1  = 1
	keyGroupMetadata   = 2
	keyConsumerGroupV3 = 3 // the first of the KIP-848 consumer group records
)

func keyVersion(key []byte) (int16, error) {
	if len(key) < 2 {
		return 0, errorf("key of %d bytes has no version", len(key))
	}
	return int16(binary.BigEndian.Uint16(key)), nil
}

func decodeOffsets(key, value []byte) (Decoded, error) {
	v, err := keyVersion(key)
	if err != nil {
		return Decoded{}, err
	}
	switch {
	case v == keyOffsetCommitV0 || v == keyOffsetCommitV1:
		return decodeOffsetCommit(key, value)
	case v == keyGroupMetadata:
		return decodeGroupMetadata(key, value)
	case groupSchemas[v].name != "":
		return decodeConsumerGroupRecord(v, key, value)
	}
	return Decoded{}, errorf("unknown __consumer_offsets key version %d", v)
}

// OffsetCommit is a decoded offset commit (value nil for a tombstone).
type OffsetCommit struct {
	Group, Topic string
	Partition    int32
	Value        *kmsg.OffsetCommitValue
}

func parseOffsetCommit(key, value []byte) (OffsetCommit, error) {
	var k kmsg.OffsetCommitKey
	if err := k.ReadFrom(key); err != nil {
		return OffsetCommit{}, errorf("offset commit key: %v", err)
	}
	oc := OffsetCommit{Group: k.Group, Topic: k.Topic, Partition: k.Partition}
	if value == nil {
		return oc, nil
	}
	var v kmsg.OffsetCommitValue
	if err := readValue("offset commit", value, &v, &v.Version, 4); err != nil {
		return oc, err
	}
	oc.Value = &v
	return oc, nil
}

// readValue reads value into v, a kmsg value of what whose version field
// is at version, and checks that version is 0..maxVer.
func readValue(what string, value []byte, v interface{ ReadFrom([]byte) error }, version *int16, maxVer int16) error {
	if err := v.ReadFrom(value); err != nil {
		return errorf("%s value: %v", what, err)
	}
	if *version < 0 || *version > maxVer {
		return errorf("%s value version %d", what, *version)
	}
	return nil
}

func decodeOffsetCommit(key, value []byte) (Decoded, error) {
	oc, err := parseOffsetCommit(key, value)
	if err != nil {
		return Decoded{}, err
	}
	kv, _ := keyVersion(key)
	d := Decoded{Type: "offset_commit", Key: Object{
		{"version", kv}, {"group", oc.Group}, {"topic", oc.Topic}, {"partition", oc.Partition},
	}}
	if v := oc.Value; v != nil {
		o := Object{{"version", v.Version}, {"offset", v.Offset}}
		if v.Version >= 3 {
			o = append(o, Field{"leaderEpoch", v.LeaderEpoch})
		}
		o = append(o, Field{"metadata", v.Metadata}, Field{"commitTimestamp", v.CommitTimestamp})
		if v.Version == 1 {
			o = append(o, Field{"expireTimestamp", v.ExpireTimestamp})
		}
		if v.TopicID != [16]byte{} {
			o = append(o, Field{"topicId", UUID(v.TopicID)})
		}
		d.Value = o
	}
	return d, nil
}

func parseGroupKey(key []byte) (string, error) {
	var k kmsg.GroupMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return "", errorf("group metadata key: %v", err)
	}
	return k.Group, nil
}

func decodeGroupMetadata(key, value []byte) (Decoded, error) {
	group, err := parseGroupKey(key)
	if err != nil {
		return Decoded{}, err
	}
	d := Decoded{Type: "group_metadata", Key: Object{{"version", int16(keyGroupMetadata)}, {"group", group}}}
	if value == nil {
		return d, nil
	}
	var v kmsg.GroupMetadataValue
	if err := readValue("group metadata", value, &v, &v.Version, 4); err != nil {
		return Decoded{}, err
	}
	o := Object{{"version", v.Version}, {"protocolType", v.ProtocolType}, {"generation", v.Generation},
		{"protocol", v.Protocol}, {"leader", v.Leader}}
	if v.Version >= 2 {
		o = append(o, Field{"currentStateTimestamp", v.CurrentStateTimestamp})
	}
	members := make([]any, 0, len(v.Members))
	for i := range v.Members {
		members = append(members, memberObject(v.Version, v.ProtocolType, &v.Members[i]))
	}
	d.Value = append(o, Field{"members", members})
	return d, nil
}

// memberObject renders a member; the subscription and assignment of the
// "consumer" protocol are decoded, others are given in base64.
func memberObject(version int16, protocolType string, m *kmsg.GroupMetadataValueMember) Object {
	o := Object{{"memberId", m.MemberID}}
	if version >= 3 {
		o = append(o, Field{"groupInstanceId", m.InstanceID})
	}
	o = append(o, Field{"clientId", m.ClientID}, Field{"clientHost", m.ClientHost})
	if version >= 1 {
		o = append(o, Field{"rebalanceTimeout", m.RebalanceTimeoutMillis})
	}
	o = append(o, Field{"sessionTimeout", m.SessionTimeoutMillis})
	if protocolType == "consumer" {
		if s, ok := consumerSubscription(m.Subscription); ok {
			o = append(o, Field{"subscription", s})
		} else {
			o = append(o, Field{"subscription", Bytes(m.Subscription)})
		}
		if a, ok := ConsumerAssignment(m.Assignment); ok {
			o = append(o, Field{"assignment", assignmentObject(a)})
		} else {
			o = append(o, Field{"assignment", Bytes(m.Assignment)})
		}
		return o
	}
	return append(o, Field{"subscription", Bytes(m.Subscription)}, Field{"assignment", Bytes(m.Assignment)})
}

// consumerSubscription decodes a "consumer" protocol subscription
// (Kafka's ConsumerProtocolSubscription), including one that says
// version 1 or later but ends after version 0's fields (topics, user
// data), as kafka-go and kafkajs write it: the later fields are absent.
func consumerSubscription(b []byte) (Object, bool) {
	var s kmsg.ConsumerMemberMetadata
	if len(b) < 2 {
		return nil, false
	}
	if s.ReadFrom(b) != nil {
		ver, ok := v0Subscription(b, &s)
		if !ok {
			return nil, false
		}
		s.Version = ver
	}
	topics := make([]any, 0, len(s.Topics))
	for _, t := range s.Topics {
		topics = append(topics, t)
	}
	return Object{{"version", s.Version}, {"topics", topics}}, true
}

// v0Subscription decodes b's fields as version 0's into s when they are
// all b holds after its version, and returns the version b says.
func v0Subscription(b []byte, s *kmsg.ConsumerMemberMetadata) (int16, bool) {
	ver := int16(binary.BigEndian.Uint16(b))
	v0 := append([]byte{0, 0}, b[2:]...)
	if ver < 1 || s.ReadFrom(v0) != nil || !bytes.Equal(s.AppendTo(nil), v0) {
		return 0, false
	}
	return ver, true
}

// TopicPartitions is a set of partitions of one topic.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// ConsumerAssignment decodes a "consumer" protocol assignment.
func ConsumerAssignment(b []byte) ([]TopicPartitions, bool) {
	var a kmsg.ConsumerMemberAssignment
	if len(b) == 0 || a.ReadFrom(b) != nil {
		return nil, false
	}
	out := make([]TopicPartitions, 0, len(a.Topics))
	for _, t := range a.Topics {
		out = append(out, TopicPartitions{t.Topic, t.Partitions})
	}
	return out, true
}

func assignmentObject(a []TopicPartitions) []any {
	out := make([]any, 0, len(a))
	for _, t := range a {
		out = append(out, Object{{"topic", t.Topic}, {"partitions", int32s(t.Partitions)}})
	}
	return out
}

func int32s(p []int32) []any {
	out := make([]any, len(p))
	for i, x := range p {
		out[i] = x
	}
	return out
}

// decodeConsumerGroupRecord decodes a KIP-848 record: its key (version,
// group id, member id for the member records; int16-length strings) and
// value (int16 version, then the schema's flexible fields).
func decodeConsumerGroupRecord(v int16, key, value []byte) (Decoded, error) {
	gs := groupSchemas[v]
	kr := reader{b: key[2:]}
	k := Object{{"version", v}, {"group", kr.str16()}}
	if gs.member {
		k = append(k, Field{"memberId", kr.str16()})
	}
	if kr.err == nil && len(kr.b) > 0 {
		kr.fail("%d bytes after the key", len(kr.b))
	}
	if kr.err != nil {
		return Decoded{}, errorf("%s key: %v", gs.name, kr.err)
	}
	d := Decoded{Type: gs.name, Key: k}
	if value == nil {
		return d, nil
	}
	r := reader{b: value}
	ver := r.int16()
	o, err := r.versioned(gs.name+" value", "value", ver, gs.maxVer, gs.fields)
	if err != nil {
		return Decoded{}, err
	}
	d.Value = o
	return d, nil
}
