package checkpoint

import (
	"fmt"
	"regexp"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// FormatPartitionMetadata renders partition.metadata: exactly
// "version: 0\ntopic_id: <id>" with no trailing newline.
func FormatPartitionMetadata(topicID [16]byte) []byte {
	return []byte("version: 0\ntopic_id: " + UUID(topicID).String())
}

var colonSpaces = regexp.MustCompile(`:\s+`)

// ReadPartitionMetadata reads the topic id of partition.metadata. A
// missing file, another version, a malformed line or the zero UUID is an
// error.
func ReadPartitionMetadata(fs vfs.FS, path string) ([16]byte, error) {
	text, err := readAll(fs, path)
	if err != nil {
		return [16]byte{}, err
	}
	return ParsePartitionMetadata(path, text)
}

// ParsePartitionMetadata parses the text of a partition.metadata file.
func ParsePartitionMetadata(path string, text []byte) ([16]byte, error) {
	lines := splitLines(text)
	if len(lines) != 2 {
		return [16]byte{}, &record.CorruptionError{File: path, Line: len(lines) + 1, Reason: fmt.Sprintf("want 2 lines, got %d", len(lines))}
	}
	if v := colonSpaces.Split(lines[0], 2); len(v) != 2 || v[0] != "version" || v[1] != "0" {
		return [16]byte{}, &record.CorruptionError{File: path, Line: 1, Reason: fmt.Sprintf("want \"version: 0\", got %q", lines[0])}
	}
	t := colonSpaces.Split(lines[1], 2)
	if len(t) != 2 || t[0] != "topic_id" {
		return [16]byte{}, &record.CorruptionError{File: path, Line: 2, Reason: fmt.Sprintf("want \"topic_id: <uuid>\", got %q", lines[1])}
	}
	id, err := ParseUUID(t[1])
	if err != nil {
		return [16]byte{}, &record.CorruptionError{File: path, Line: 2, Reason: err.Error()}
	}
	if id.IsZero() {
		return [16]byte{}, &record.CorruptionError{File: path, Line: 2, Reason: "zero topic id"}
	}
	return id, nil
}

// WritePartitionMetadata durably writes partition.metadata; the zero UUID
// is refused.
func WritePartitionMetadata(fs vfs.FS, path string, topicID [16]byte) error {
	if UUID(topicID).IsZero() {
		return fmt.Errorf("write %s: zero topic id: %w", path, record.ErrCorruption)
	}
	return vfs.WriteFileDurable(fs, path, FormatPartitionMetadata(topicID))
}
