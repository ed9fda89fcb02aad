package internaltopic

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/record"
)

func str(s string) *string { return &s }

// decodeJSON renders a record of topic t and parses the line back.
func decodeJSON(t *testing.T, tp Topic, key, value []byte) map[string]any {
	t.Helper()
	line := tp.AppendJSON(nil, &record.Record{Offset: 7, Timestamp: 1700000000000, Key: key, Value: value})
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, line)
	}
	if e, ok := m["error"]; ok {
		t.Fatalf("decode error %v: %s", e, line)
	}
	return m
}

func obj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not an object", v)
	}
	return m
}

func TestOffsetCommitAllVersions(t *testing.T) {
	for kv := int16(0); kv <= 1; kv++ {
		for vv := int16(0); vv <= 4; vv++ {
			k := kmsg.OffsetCommitKey{Version: kv, Group: "g1", Topic: "orders", Partition: 3}
			v := kmsg.OffsetCommitValue{Version: vv, Offset: 42, LeaderEpoch: 5, Metadata: "m", CommitTimestamp: 1700000000001, ExpireTimestamp: 1700000009999}
			m := decodeJSON(t, ConsumerOffsets, k.AppendTo(nil), v.AppendTo(nil))
			if m["type"] != "offset_commit" || m["offset"] != 7.0 {
				t.Fatalf("k%d v%d: %v", kv, vv, m)
			}
			key, val := obj(t, m["key"]), obj(t, m["value"])
			if key["group"] != "g1" || key["topic"] != "orders" || key["partition"] != 3.0 || key["version"] != float64(kv) {
				t.Fatalf("key %v", key)
			}
			if val["offset"] != 42.0 || val["metadata"] != "m" || val["commitTimestamp"] != 1700000000001.0 || val["version"] != float64(vv) {
				t.Fatalf("v%d value %v", vv, val)
			}
			if _, ok := val["leaderEpoch"]; ok != (vv >= 3) {
				t.Fatalf("v%d leaderEpoch %v", vv, val)
			}
			if e, ok := val["expireTimestamp"]; ok != (vv == 1) || ok && e != 1700000009999.0 {
				t.Fatalf("v%d expireTimestamp %v", vv, val)
			}
		}
	}
}

func TestOffsetCommitTombstone(t *testing.T) {
	k := kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t", Partition: 0}
	m := decodeJSON(t, ConsumerOffsets, k.AppendTo(nil), nil)
	if m["value"] != nil || obj(t, m["key"])["group"] != "g" {
		t.Fatalf("%v", m)
	}
}

func TestGroupMetadataAllVersions(t *testing.T) {
	sub := kmsg.ConsumerMemberMetadata{Version: 1, Topics: []string{"orders", "users"}}
	asg := kmsg.ConsumerMemberAssignment{Version: 1, Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "orders", Partitions: []int32{0, 2}}}}
	for vv := int16(0); vv <= 4; vv++ {
		k := kmsg.GroupMetadataKey{Version: 2, Group: "grp"}
		v := kmsg.GroupMetadataValue{Version: vv, ProtocolType: "consumer", Generation: 9, Protocol: str("range"), Leader: str("m1"),
			CurrentStateTimestamp: 1700000000002,
			Members: []kmsg.GroupMetadataValueMember{{MemberID: "m1", InstanceID: str("i1"), ClientID: "c1", ClientHost: "/10.0.0.1",
				RebalanceTimeoutMillis: 300000, SessionTimeoutMillis: 45000, Subscription: sub.AppendTo(nil), Assignment: asg.AppendTo(nil)}}}
		m := decodeJSON(t, ConsumerOffsets, k.AppendTo(nil), v.AppendTo(nil))
		if m["type"] != "group_metadata" || obj(t, m["key"])["group"] != "grp" {
			t.Fatalf("%v", m)
		}
		val := obj(t, m["value"])
		if val["protocolType"] != "consumer" || val["generation"] != 9.0 || val["leader"] != "m1" || val["protocol"] != "range" {
			t.Fatalf("v%d %v", vv, val)
		}
		mem := obj(t, val["members"].([]any)[0])
		if mem["clientId"] != "c1" || mem["clientHost"] != "/10.0.0.1" || mem["memberId"] != "m1" || mem["sessionTimeout"] != 45000.0 {
			t.Fatalf("v%d member %v", vv, mem)
		}
		if _, ok := mem["groupInstanceId"]; ok != (vv >= 3) {
			t.Fatalf("v%d instance id %v", vv, mem)
		}
		a := obj(t, mem["assignment"].([]any)[0])
		if a["topic"] != "orders" || len(a["partitions"].([]any)) != 2 || a["partitions"].([]any)[1] != 2.0 {
			t.Fatalf("assignment %v", a)
		}
		if s := obj(t, mem["subscription"]); len(s["topics"].([]any)) != 2 {
			t.Fatalf("subscription %v", s)
		}
	}
}

func TestTxnMetadataAllVersions(t *testing.T) {
	for vv := int16(0); vv <= 1; vv++ {
		k := kmsg.TxnMetadataKey{Version: 0, TransactionalID: "tx-1"}
		v := kmsg.TxnMetadataValue{Version: vv, ProducerID: 4000, ProducerEpoch: 3, TimeoutMillis: 60000, State: 4,
			Topics:              []kmsg.TxnMetadataValueTopic{{Topic: "orders", Partitions: []int32{1}}},
			LastUpdateTimestamp: 1700000000003, StartTimestamp: 1700000000000, PreviousProducerID: -1, NextProducerID: -1}
		m := decodeJSON(t, TransactionState, k.AppendTo(nil), v.AppendTo(nil))
		val := obj(t, m["value"])
		if m["type"] != "transaction_metadata" || obj(t, m["key"])["transactionalId"] != "tx-1" ||
			val["producerId"] != 4000.0 || val["producerEpoch"] != 3.0 || val["state"] != "CompleteCommit" ||
			val["transactionTimeoutMs"] != 60000.0 {
			t.Fatalf("v%d %v", vv, m)
		}
		p := obj(t, val["transactionPartitions"].([]any)[0])
		if p["topic"] != "orders" || p["partitionIds"].([]any)[0] != 1.0 {
			t.Fatalf("partitions %v", p)
		}
	}
}

// metaRecord frames a metadata record body as __cluster_metadata stores it.
func metaRecord(key, version int, body []byte) []byte {
	b := binary.AppendUvarint(nil, 1)
	b = binary.AppendUvarint(b, uint64(key))
	b = binary.AppendUvarint(b, uint64(version))
	return append(b, body...)
}

// compact helpers build flexible-version bodies by hand.
func cstr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s)+1)), s...)
}

func TestMetadataRecords(t *testing.T) {
	id := UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	topic := cstr(nil, "orders")
	topic = append(topic, id[:]...)
	topic = append(topic, 0) // no tagged fields
	m := decodeJSON(t, ClusterMetadata, nil, metaRecord(2, 0, topic))
	if v := obj(t, m["value"]); m["type"] != "TopicRecord" || v["name"] != "orders" || v["topicId"] != id.String() {
		t.Fatalf("%v", m)
	}

	cfg := append([]byte{2}, cstr(nil, "orders")...)
	cfg = cstr(cfg, "retention.ms")
	cfg = cstr(cfg, "-1")
	cfg = append(cfg, 0)
	m = decodeJSON(t, ClusterMetadata, nil, metaRecord(4, 0, cfg))
	if v := obj(t, m["value"]); v["name"] != "retention.ms" || v["value"] != "-1" || v["resourceType"] != 2.0 {
		t.Fatalf("%v", m)
	}
	// a null config value (a deletion) and an unknown tagged field
	cfg = append([]byte{2}, cstr(nil, "orders")...)
	cfg = cstr(cfg, "retention.ms")
	cfg = append(cfg, 0)             // null
	cfg = append(cfg, 1, 9, 2, 7, 7) // one tagged field, tag 9, 2 bytes
	m = decodeJSON(t, ClusterMetadata, nil, metaRecord(4, 0, cfg))
	if v := obj(t, m["value"]); v["value"] != nil {
		t.Fatalf("%v", m)
	}

	// PartitionChangeRecord: leader (tag 1) and isr (tag 0) tagged
	pc := binary.BigEndian.AppendUint32(nil, 3)
	pc = append(pc, id[:]...)
	pc = append(pc, 2)
	pc = append(pc, 0, 9, 3, 0, 0, 0, 5, 0, 0, 0, 6) // isr [5, 6]
	pc = append(pc, 1, 4, 0, 0, 0, 5)                // leader 5
	m = decodeJSON(t, ClusterMetadata, nil, metaRecord(5, 0, pc))
	if v := obj(t, m["value"]); v["leader"] != 5.0 || len(v["isr"].([]any)) != 2 || v["partitionId"] != 3.0 {
		t.Fatalf("%v", m)
	}
}

func TestMalformedRendersRaw(t *testing.T) {
	for _, c := range []struct {
		tp         Topic
		key, value []byte
	}{
		{ConsumerOffsets, []byte{0}, nil},
		{ConsumerOffsets, []byte{0, 1, 0, 5, 'a'}, []byte{0, 3}},
		{ConsumerOffsets, []byte{0, 99}, nil},
		{TransactionState, []byte{0, 0, 0, 1, 'x'}, []byte{0, 9}},
		{ClusterMetadata, nil, []byte{1, 200, 1, 0}},
		{ClusterMetadata, nil, metaRecord(2, 5, nil)},
		{ClusterMetadata, nil, metaRecord(2, 0, []byte{0xff, 0xff, 0xff, 0xff, 0x0f})},
	} {
		line := c.tp.AppendJSON(nil, &record.Record{Key: c.key, Value: c.value})
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if m["error"] == nil {
			t.Fatalf("no error for %x/%x: %s", c.key, c.value, line)
		}
		if _, err := c.tp.Decode(c.key, c.value); !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v", err)
		}
	}
}

// FuzzDecode: no input makes a decoder panic, and every rendering is one
// valid JSON object.
func FuzzDecode(f *testing.F) {
	k := kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t"}
	v := kmsg.OffsetCommitValue{Version: 3, Offset: 1}
	f.Add(uint8(0), k.AppendTo(nil), v.AppendTo(nil))
	gk := kmsg.GroupMetadataKey{Version: 2, Group: "g"}
	gv := kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Members: []kmsg.GroupMetadataValueMember{{MemberID: "m"}}}
	f.Add(uint8(0), gk.AppendTo(nil), gv.AppendTo(nil))
	tk := kmsg.TxnMetadataKey{TransactionalID: "x"}
	tv := kmsg.TxnMetadataValue{Version: 1}
	f.Add(uint8(1), tk.AppendTo(nil), tv.AppendTo(nil))
	f.Add(uint8(0), str16(str16(binary.BigEndian.AppendUint16(nil, 8), "g"), "m"), []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0})
	f.Add(uint8(2), []byte(nil), metaRecord(0, 2, nil))
	f.Add(uint8(2), []byte(nil), metaRecord(3, 1, nil))
	f.Fuzz(func(t *testing.T, which uint8, key, value []byte) {
		tp := []Topic{ConsumerOffsets, TransactionState, ClusterMetadata}[which%3]
		line := tp.AppendJSON(nil, &record.Record{Key: key, Value: value})
		if !json.Valid(line) {
			t.Fatalf("invalid JSON: %s", line)
		}
		var g Groups
		g.Apply(key, value)
		var c Configs
		c.Apply(value)
	})
}

func TestGroupsFold(t *testing.T) {
	var g Groups
	commit := func(group, topic string, p int32, off int64) {
		k := kmsg.OffsetCommitKey{Version: 1, Group: group, Topic: topic, Partition: p}
		var v []byte
		if off >= 0 {
			val := kmsg.OffsetCommitValue{Version: 3, Offset: off}
			v = val.AppendTo(nil)
		}
		g.Apply(k.AppendTo(nil), v)
	}
	commit("a", "t", 0, 5)
	commit("a", "t", 0, 9)
	commit("a", "t", 1, 3)
	commit("b", "t", 0, 1)
	commit("b", "t", 0, -1) // tombstone: b has nothing left
	asg := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "u", Partitions: []int32{4}}}}
	gk := kmsg.GroupMetadataKey{Version: 2, Group: "a"}
	gv := kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Generation: 2,
		Members: []kmsg.GroupMetadataValueMember{{MemberID: "m1", ClientID: "c", ClientHost: "/h", Assignment: asg.AppendTo(nil)}}}
	g.Apply(gk.AppendTo(nil), gv.AppendTo(nil))
	if names := g.Names(); len(names) != 1 || names[0] != "a" {
		t.Fatalf("groups %v", names)
	}
	a := g.Group("a")
	if a.Offsets[TopicPartition{"t", 0}] != 9 || a.Offsets[TopicPartition{"t", 1}] != 3 {
		t.Fatalf("offsets %v", a.Offsets)
	}
	if len(a.Members) != 1 || a.Members[0].ClientID != "c" || len(a.Members[0].Assigned) != 1 ||
		a.Members[0].Assigned[0].Topic != "u" || len(a.Members[0].Assigned[0].Partitions) != 1 || a.Members[0].Assigned[0].Partitions[0] != 4 {
		t.Fatalf("members %+v", a.Members)
	}
}

func TestConfigsFold(t *testing.T) {
	id := UUID{9}
	topicRec := append(cstr(nil, "orders"), id[:]...)
	topicRec = append(topicRec, 0)
	config := func(name string, value *string) []byte {
		b := append([]byte{2}, cstr(nil, "orders")...)
		b = cstr(b, name)
		if value == nil {
			b = append(b, 0)
		} else {
			b = cstr(b, *value)
		}
		return metaRecord(4, 0, append(b, 0))
	}
	var c Configs
	c.Apply(metaRecord(2, 0, topicRec))
	c.Apply(config("retention.ms", str("-1")))
	c.Apply(config("cleanup.policy", str("compact")))
	c.Apply(config("retention.ms", str("1000")))
	c.Apply(config("cleanup.policy", nil))
	if kv := c.Topic("orders"); len(kv) != 1 || kv["retention.ms"] != "1000" {
		t.Fatalf("%v", kv)
	}
	c.Apply(metaRecord(9, 0, append(id[:], 0)))
	if kv := c.Topic("orders"); len(kv) != 0 {
		t.Fatalf("after removal %v", kv)
	}
}

func str16(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...)
}

// TestConsumerGroupRecords: KIP-848 records decode from their schemas: a
// current member assignment (key with member id) and member metadata with
// the tagged classic metadata struct; a tombstone keeps the key.
func TestConsumerGroupRecords(t *testing.T) {
	key := str16(str16(binary.BigEndian.AppendUint16(nil, 8), "grp"), "m-1")
	id := UUID{7}
	val := binary.BigEndian.AppendUint16(nil, 0)
	val = binary.BigEndian.AppendUint32(val, 5) // memberEpoch
	val = binary.BigEndian.AppendUint32(val, 4) // previousMemberEpoch
	val = append(val, 1)                        // state
	val = append(val, 2)                        // assignedPartitions: 1 entry
	val = append(val, id[:]...)
	val = append(val, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0) // partitions [0, 2], no tags
	val = append(val, 1, 0)                         // partitionsPendingRevocation: empty; no tags
	m := decodeJSON(t, ConsumerOffsets, key, val)
	k, v := obj(t, m["key"]), obj(t, m["value"])
	if m["type"] != "consumer_group_current_member_assignment" || k["group"] != "grp" || k["memberId"] != "m-1" ||
		v["memberEpoch"] != 5.0 || len(v["assignedPartitions"].([]any)) != 1 {
		t.Fatalf("%v", m)
	}
	if p := obj(t, v["assignedPartitions"].([]any)[0]); p["topicId"] != id.String() || p["partitions"].([]any)[1] != 2.0 {
		t.Fatalf("%v", p)
	}

	key = str16(str16(binary.BigEndian.AppendUint16(nil, 5), "grp"), "m-1")
	val = binary.BigEndian.AppendUint16(nil, 0)
	val = append(val, 0, 0)      // instanceId, rackId null
	val = cstr(val, "cli")       // clientId
	val = cstr(val, "/10.0.0.9") // clientHost
	val = append(val, 2)         // one topic
	val = cstr(val, "orders")    //
	val = append(val, 0)         // regex null
	val = binary.BigEndian.AppendUint32(val, 300000)
	val = cstr(val, "uniform")
	classic := binary.BigEndian.AppendUint32(nil, 45000)
	classic = append(classic, 1, 0) // no protocols; no tags
	val = append(val, 1, 0, byte(len(classic)))
	val = append(val, classic...)
	m = decodeJSON(t, ConsumerOffsets, key, val)
	v = obj(t, m["value"])
	if v["clientId"] != "cli" || v["clientHost"] != "/10.0.0.9" || v["serverAssignor"] != "uniform" ||
		obj(t, v["classicMemberMetadata"])["sessionTimeoutMs"] != 45000.0 || v["instanceId"] != nil {
		t.Fatalf("%v", m)
	}
	m = decodeJSON(t, ConsumerOffsets, key, nil)
	if m["value"] != nil || obj(t, m["key"])["memberId"] != "m-1" {
		t.Fatalf("%v", m)
	}
}

// TestSubscriptionV1WithoutOwnedPartitions: kafka-go and kafkajs write a
// version 1 subscription holding only version 0's fields (topics, user
// data, which may be null or empty): it decodes to its topics, not base64;
// bytes after those fields still make it undecodable.
func TestSubscriptionV1WithoutOwnedPartitions(t *testing.T) {
	v0 := func(userData int32) []byte {
		b := []byte{0, 1, 0, 0, 0, 2} // version 1, two topics
		for _, s := range []string{"orders", "users"} {
			b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
			b = append(b, s...)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(userData))
		if userData > 0 {
			b = append(b, make([]byte, userData)...)
		}
		return b
	}
	for _, ud := range []int32{-1, 0, 3} {
		sub := v0(ud)
		if s, ok := consumerSubscription(sub); !ok || len(s) != 2 || s[0].Value != int16(1) || len(s[1].Value.([]any)) != 2 || s[1].Value.([]any)[1] != "users" {
			t.Errorf("user data %d: %v %v", ud, s, ok)
		}
	}
	if s, ok := consumerSubscription(append(v0(0), 0, 0, 0)); ok {
		t.Errorf("trailing bytes decoded: %v", s)
	}
	if s, ok := consumerSubscription(append([]byte{0, 0}, v0(0)[2:]...)); !ok || s[0].Value != int16(0) {
		t.Errorf("version 0: %v %v", s, ok)
	}
}
