package checkpoint

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int
}

// ReadOffsets reads an OffsetCheckpointFile (recovery point, log start,
// replication and cleaner checkpoints). A missing or empty file has no
// entries. A bad version, count or number is an error naming file and line.
func ReadOffsets(fs vfs.FS, path string) (map[TopicPartition]int64, error) {
	entries, err := readCheckpoint(fs, path)
	if err != nil {
		return nil, err
	}
	m := make(map[TopicPartition]int64, len(entries))
	for i, e := range entries {
		tp, off, err := parseOffsetEntry(path, i+3, e)
		if err != nil {
			return nil, err
		}
		m[tp] = off
	}
	return m, nil
}

func parseOffsetEntry(path string, line int, e []string) (TopicPartition, int64, error) {
	if len(e) != 3 {
		return TopicPartition{}, 0, &record.CorruptionError{File: path, Line: line, Reason: fmt.Sprintf("want \"topic partition offset\", got %d fields", len(e))}
	}
	p, err := parseInt(path, line, e, 1, 32)
	if err != nil {
		return TopicPartition{}, 0, err
	}
	if p < 0 {
		return TopicPartition{}, 0, &record.CorruptionError{File: path, Line: line, Reason: fmt.Sprintf("negative partition %d", p)}
	}
	off, err := parseInt(path, line, e, 2, 64)
	if err != nil {
		return TopicPartition{}, 0, err
	}
	return TopicPartition{Topic: e[0], Partition: int(p)}, off, nil
}

// FormatOffsets renders m as an OffsetCheckpointFile, lines sorted by
// topic and partition.
func FormatOffsets(m map[TopicPartition]int64) []byte {
	tps := SortedPartitions(m)
	lines := make([]string, len(tps))
	for i, tp := range tps {
		lines[i] = tp.Topic + " " + strconv.Itoa(tp.Partition) + " " + strconv.FormatInt(m[tp], 10)
	}
	return formatCheckpoint(lines)
}

// SortedPartitions returns the partitions of m sorted by topic, then
// partition: the order of an OffsetCheckpointFile's lines.
func SortedPartitions(m map[TopicPartition]int64) []TopicPartition {
	tps := slices.AppendSeq(make([]TopicPartition, 0, len(m)), maps.Keys(m))
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return kafkaname.ComparePartitions(a.Topic, a.Partition, b.Topic, b.Partition)
	})
	return tps
}

// WriteOffsets durably replaces path with m.
func WriteOffsets(fs vfs.FS, path string, m map[TopicPartition]int64) error {
	return vfs.WriteFileDurable(fs, path, FormatOffsets(m))
}
