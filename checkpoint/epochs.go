package checkpoint

import (
	"fmt"
	"strconv"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// EpochEntry is one line of a leader-epoch-checkpoint: the first offset
// written under a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// ReadLeaderEpochs reads a leader-epoch-checkpoint; missing or empty = none.
func ReadLeaderEpochs(fs vfs.FS, path string) ([]EpochEntry, error) {
	entries, err := readCheckpoint(fs, path)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, 0, len(entries))
	for i, e := range entries {
		line := i + 3
		if len(e) != 2 {
			return nil, &record.CorruptionError{File: path, Line: line, Reason: fmt.Sprintf("want \"epoch startOffset\", got %d fields", len(e))}
		}
		epoch, err := parseInt(path, line, e, 0, 32)
		if err != nil {
			return nil, err
		}
		start, err := parseInt(path, line, e, 1, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, EpochEntry{Epoch: int32(epoch), StartOffset: start})
	}
	return out, nil
}

// FormatLeaderEpochs renders entries in the given order.
func FormatLeaderEpochs(entries []EpochEntry) []byte {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = strconv.FormatInt(int64(e.Epoch), 10) + " " + strconv.FormatInt(e.StartOffset, 10)
	}
	return formatCheckpoint(lines)
}

// WriteLeaderEpochs durably replaces path with entries.
func WriteLeaderEpochs(fs vfs.FS, path string, entries []EpochEntry) error {
	return vfs.WriteFileDurable(fs, path, FormatLeaderEpochs(entries))
}
