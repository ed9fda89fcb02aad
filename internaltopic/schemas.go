package internaltopic

// The KRaft metadata records (metadata/src/main/resources/common/metadata
// in Kafka's tree): API key, name, highest known version and fields, in
// schema order. Every version of these records is flexible.
var schemas = []schema{
	{0, "RegisterBrokerRecord", 3, []field{
		f("brokerId", kInt32), fieldFrom("isMigratingZkBroker", kBool, 2), f("incarnationId", kUUID),
		f("brokerEpoch", kInt64),
		structs("endPoints", f("name", kString), f("host", kString), f("port", kUint16), f("securityProtocol", kInt16)),
		structs("features", f("name", kString), f("minSupportedVersion", kInt16), f("maxSupportedVersion", kInt16)),
		f("rack", kString), f("fenced", kBool), fieldFrom("inControlledShutdown", kBool, 1),
		tagged("logDirs", kUUIDs, 0, 3),
	}},
	{1, "UnregisterBrokerRecord", 0, []field{f("brokerId", kInt32), f("brokerEpoch", kInt64)}},
	{2, "TopicRecord", 0, []field{f("name", kString), f("topicId", kUUID)}},
	{3, "PartitionRecord", 2, []field{
		f("partitionId", kInt32), f("topicId", kUUID), f("replicas", kInt32s), f("isr", kInt32s),
		f("removingReplicas", kInt32s), f("addingReplicas", kInt32s), f("leader", kInt32),
		tagged("leaderRecoveryState", kInt8, 0, 0), f("leaderEpoch", kInt32), f("partitionEpoch", kInt32),
		fieldFrom("directories", kUUIDs, 1),
		tagged("eligibleLeaderReplicas", kInt32s, 1, 2), tagged("lastKnownElr", kInt32s, 2, 2),
	}},
	{4, "ConfigRecord", 0, []field{
		f("resourceType", kInt8), f("resourceName", kString), f("name", kString), f("value", kString),
	}},
	{5, "PartitionChangeRecord", 2, []field{
		f("partitionId", kInt32), f("topicId", kUUID),
		tagged("isr", kInt32s, 0, 0), tagged("leader", kInt32, 1, 0), tagged("replicas", kInt32s, 2, 0),
		tagged("removingReplicas", kInt32s, 3, 0), tagged("addingReplicas", kInt32s, 4, 0),
		tagged("leaderRecoveryState", kInt8, 5, 0), tagged("directories", kUUIDs, 8, 1),
		tagged("eligibleLeaderReplicas", kInt32s, 6, 2), tagged("lastKnownElr", kInt32s, 7, 2),
	}},
	{7, "FenceBrokerRecord", 0, []field{f("id", kInt32), f("epoch", kInt64)}},
	{8, "UnfenceBrokerRecord", 0, []field{f("id", kInt32), f("epoch", kInt64)}},
	{9, "RemoveTopicRecord", 0, []field{f("topicId", kUUID)}},
	{10, "DelegationTokenRecord", 0, []field{
		f("owner", kString), f("requester", kString), f("renewers", kStrings), f("issueTimestamp", kInt64),
		f("maxTimestamp", kInt64), f("expirationTimestamp", kInt64), f("tokenId", kString),
	}},
	{11, "UserScramCredentialRecord", 0, []field{
		f("name", kString), f("mechanism", kInt8), f("salt", kBytes), f("storedKey", kBytes),
		f("serverKey", kBytes), f("iterations", kInt32),
	}},
	{12, "FeatureLevelRecord", 0, []field{f("name", kString), f("featureLevel", kInt16)}},
	{14, "ClientQuotaRecord", 0, []field{
		structs("entity", f("entityType", kString), f("entityName", kString)),
		f("key", kString), f("value", kFloat64), f("remove", kBool),
	}},
	{15, "ProducerIdsRecord", 0, []field{f("brokerId", kInt32), f("brokerEpoch", kInt64), f("nextProducerId", kInt64)}},
	{17, "BrokerRegistrationChangeRecord", 2, []field{
		f("brokerId", kInt32), f("brokerEpoch", kInt64), tagged("fenced", kInt8, 0, 0),
		tagged("inControlledShutdown", kInt8, 1, 1), tagged("logDirs", kUUIDs, 2, 2),
	}},
	{18, "AccessControlEntryRecord", 0, []field{
		f("id", kUUID), f("resourceType", kInt8), f("resourceName", kString), f("patternType", kInt8),
		f("principal", kString), f("host", kString), f("operation", kInt8), f("permissionType", kInt8),
	}},
	{19, "RemoveAccessControlEntryRecord", 0, []field{f("id", kUUID)}},
	{20, "NoOpRecord", 0, nil},
	{21, "ZkMigrationStateRecord", 0, []field{f("zkMigrationState", kInt8)}},
	{22, "RemoveUserScramCredentialRecord", 0, []field{f("name", kString), f("mechanism", kInt8)}},
	{23, "BeginTransactionRecord", 0, []field{tagged("name", kString, 0, 0)}},
	{24, "EndTransactionRecord", 0, nil},
	{25, "AbortTransactionRecord", 0, []field{tagged("reason", kString, 0, 0)}},
	{26, "RemoveDelegationTokenRecord", 0, []field{f("tokenId", kString)}},
	{27, "RegisterControllerRecord", 0, []field{
		f("controllerId", kInt32), f("incarnationId", kUUID), f("zkMigrationReady", kBool),
		structs("endPoints", f("name", kString), f("host", kString), f("port", kUint16), f("securityProtocol", kInt16)),
		structs("features", f("name", kString), f("minSupportedVersion", kInt16), f("maxSupportedVersion", kInt16)),
	}},
}

// schemaByKey indexes schemas by API key.
var schemaByKey = func() map[int]*schema {
	m := make(map[int]*schema, len(schemas))
	for i := range schemas {
		m[schemas[i].key] = &schemas[i]
	}
	return m
}()

// The consumer group records of KIP-848 in __consumer_offsets
// (group-coordinator/.../common/message), by key version: the value's
// schema (every version flexible) and whether the key holds a member id
// after the group id.
var groupSchemas = map[int16]struct {
	schema
	member bool
}{
	3: {schema{3, "consumer_group_metadata", 0, []field{f("epoch", kInt32)}}, false},
	4: {schema{4, "consumer_group_partition_metadata", 0, []field{
		structs("topics", f("topicId", kUUID), f("topicName", kString), f("numPartitions", kInt32),
			structs("partitionMetadata", f("partition", kInt32), f("racks", kStrings))),
	}}, false},
	5: {schema{5, "consumer_group_member_metadata", 0, []field{
		f("instanceId", kString), f("rackId", kString), f("clientId", kString), f("clientHost", kString),
		f("subscribedTopicNames", kStrings), f("subscribedTopicRegex", kString), f("rebalanceTimeoutMs", kInt32),
		f("serverAssignor", kString),
		taggedStruct("classicMemberMetadata", 0, 0, f("sessionTimeoutMs", kInt32),
			structs("supportedProtocols", f("name", kString), f("metadata", kBytes))),
	}}, true},
	6: {schema{6, "consumer_group_target_assignment_metadata", 0, []field{f("assignmentEpoch", kInt32)}}, false},
	7: {schema{7, "consumer_group_target_assignment_member", 0, []field{
		structs("topicPartitions", f("topicId", kUUID), f("partitions", kInt32s)),
	}}, true},
	8: {schema{8, "consumer_group_current_member_assignment", 0, []field{
		f("memberEpoch", kInt32), f("previousMemberEpoch", kInt32), f("state", kInt8),
		structs("assignedPartitions", f("topicId", kUUID), f("partitions", kInt32s)),
		structs("partitionsPendingRevocation", f("topicId", kUUID), f("partitions", kInt32s)),
	}}, true},
}
