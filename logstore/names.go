package logstore

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// File suffixes of a segment, as Kafka names them.
const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	txnIndexSuffix  = ".txnindex"
	snapshotSuffix  = ".snapshot"
	deletedSuffix   = ".deleted"
	cleanedSuffix   = ".cleaned"
	swapSuffix      = ".swap"
	sidecarSuffix   = ".partfs"
)

// Root files of a data directory.
const (
	lockFile            = ".lock"
	cleanShutdownFile   = ".kafka_cleanshutdown"
	metaPropertiesFile  = "meta.properties"
	recoveryPointFile   = "recovery-point-offset-checkpoint"
	logStartOffsetFile  = "log-start-offset-checkpoint"
	replicationFile     = "replication-offset-checkpoint"
	cleanerOffsetFile   = "cleaner-offset-checkpoint"
	topicsFile          = "partfs-topics.json"
	leaderEpochFile     = "leader-epoch-checkpoint"
	partitionMetaFile   = "partition.metadata"
	segmentsSidecarName = "logstore-segments"
)

// baseName formats an offset as Kafka does: at least 20 digits, zero-padded.
func baseName(offset int64) string {
	return fmt.Sprintf("%020d", offset)
}

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, baseName(base)+suffix)
}

// parseBase parses the offset in front of the first '.' of a file name.
func parseBase(name string) (int64, bool) {
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

// partitionDirName is Kafka's "<topic>-<partition>".
func partitionDirName(topic string, partition int) string {
	return topic + "-" + strconv.Itoa(partition)
}

// parsePartitionDir splits "<topic>-<n>"; directories Kafka marks for
// deletion or migration ("...-delete", "-future", "-stray") do not parse.
func parsePartitionDir(name string) (string, int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != name[i+1:] {
		return "", 0, false
	}
	topic := name[:i]
	if validTopic(topic) != nil {
		return "", 0, false
	}
	return topic, n, true
}

// validTopic applies Kafka's rule: 1 to 249 characters of [a-zA-Z0-9._-],
// not "." or "..".
func validTopic(name string) error {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return fmt.Errorf("topic name %q: must be 1 to 249 characters, not . or ..", name)
	}
	for _, c := range name {
		ok := c == '.' || c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return fmt.Errorf("topic name %q: character %q not in [a-zA-Z0-9._-]", name, c)
		}
	}
	return nil
}
