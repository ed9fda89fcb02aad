// Package kafkaname owns Kafka's names for what a data directory holds: the
// topic name rule, partition directories ("<topic>-<partition>"), segment
// files ("<20-digit base offset><suffix>") and their suffixes, and the root
// and partition files Kafka writes beside them. Every package that makes or
// parses such a name does it here. It imports nothing else of partfs.
package kafkaname

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Suffixes of a segment's files, and the marks Kafka appends to one being
// deleted, cleaned or swapped in.
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	TxnIndexSuffix  = ".txnindex"
	SnapshotSuffix  = ".snapshot"
	DeletedSuffix   = ".deleted"
	CleanedSuffix   = ".cleaned"
	SwapSuffix      = ".swap"
)

// Files of a data directory's root.
const (
	LockFile           = ".lock"
	CleanShutdownFile  = ".kafka_cleanshutdown"
	MetaPropertiesFile = "meta.properties"
	RecoveryPointFile  = "recovery-point-offset-checkpoint"
	LogStartOffsetFile = "log-start-offset-checkpoint"
	ReplicationFile    = "replication-offset-checkpoint"
	CleanerOffsetFile  = "cleaner-offset-checkpoint"
)

// OffsetCheckpointFiles are the root's offset checkpoint files.
var OffsetCheckpointFiles = []string{RecoveryPointFile, LogStartOffsetFile, ReplicationFile, CleanerOffsetFile}

// Files of a partition directory besides its segments.
const (
	LeaderEpochFile       = "leader-epoch-checkpoint"
	PartitionMetadataFile = "partition.metadata"
)

// MaxTopicLen is the longest topic name Kafka accepts.
const MaxTopicLen = 249

// CheckTopic applies Kafka's topic name rule: 1 to 249 characters of
// [a-zA-Z0-9._-], not "." or "..".
func CheckTopic(name string) error {
	ok := name != "" && len(name) <= MaxTopicLen && name != "." && name != ".."
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c == '.' || c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	if !ok {
		return fmt.Errorf("topic name %q: want 1 to 249 characters of [a-zA-Z0-9._-], not . or ..", name)
	}
	return nil
}

// Collides reports whether topics a and b are different names that Kafka
// would not let exist together: equal once '.' is read as '_' (its metric
// names do that), e.g. "a.b" and "a_b".
func Collides(a, b string) bool {
	return a != b && strings.ReplaceAll(a, ".", "_") == strings.ReplaceAll(b, ".", "_")
}

// ValidTopic reports whether name passes CheckTopic.
func ValidTopic(name string) bool { return CheckTopic(name) == nil }

// PartitionDir is Kafka's "<topic>-<partition>".
func PartitionDir(topic string, partition int) string {
	return topic + "-" + strconv.Itoa(partition)
}

// ComparePartitions orders partitions by topic, then number: the order of
// an offset checkpoint's lines and of a group's partitions.
func ComparePartitions[N cmp.Ordered](topicA string, a N, topicB string, b N) int {
	return cmp.Or(strings.Compare(topicA, topicB), cmp.Compare(a, b))
}

// ParsePartitionDir splits a name PartitionDir makes: a valid topic, '-',
// and a partition number in its canonical decimal form ("t-01" and "t-+1"
// do not parse, so no two directories name one partition). Directories
// Kafka marks for deletion or migration ("...-delete", "-future",
// "-stray") do not parse either.
func ParsePartitionDir(name string) (topic string, partition int, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != name[i+1:] {
		return "", 0, false
	}
	if !ValidTopic(name[:i]) {
		return "", 0, false
	}
	return name[:i], n, true
}

// BaseName formats a base offset as Kafka names segment files: at least 20
// digits, zero-padded.
func BaseName(offset int64) string {
	return fmt.Sprintf("%020d", offset)
}

// SegmentFile is the name of one file of the segment at base: BaseName and
// suffix.
func SegmentFile(base int64, suffix string) string {
	return BaseName(base) + suffix
}

// ParseBase parses the offset in front of the first '.' of a segment file
// name.
func ParseBase(name string) (int64, bool) {
	i := strings.IndexByte(name, '.')
	if i <= 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[:i], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// ParseSegmentFile parses "<base offset><suffix>", the whole name in front
// of suffix being the offset.
func ParseSegmentFile(name, suffix string) (int64, bool) {
	stem, ok := strings.CutSuffix(name, suffix)
	if !ok || stem == "" || stem[0] < '0' || stem[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(stem, 10, 64)
	return n, err == nil
}

// SnapshotCheckpointSuffix ends the name of a KRaft metadata snapshot,
// "<20-digit end offset>-<10-digit epoch>.checkpoint": a record-batch log
// (a snapshot header control batch, metadata records, a footer), not a
// text checkpoint.
const SnapshotCheckpointSuffix = ".checkpoint"

// ParseSnapshotCheckpoint parses a KRaft snapshot's file name into the
// offset it ends at and the epoch of that offset.
func ParseSnapshotCheckpoint(name string) (end int64, epoch int32, ok bool) {
	stem, found := strings.CutSuffix(name, SnapshotCheckpointSuffix)
	off, ep, dash := strings.Cut(stem, "-")
	if !found || !dash || len(off) != 20 || len(ep) != 10 || !digits(off) || !digits(ep) {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(off, 10, 64)
	e, err2 := strconv.ParseInt(ep, 10, 32)
	return n, int32(e), err1 == nil && err2 == nil
}

// digits reports that s is all decimal digits.
func digits(s string) bool {
	return strings.TrimLeft(s, "0123456789") == ""
}
