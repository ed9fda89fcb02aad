package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// cleanShutdown is the JSON of .kafka_cleanshutdown.
type cleanShutdown struct {
	Version     int   `json:"version"`
	BrokerEpoch int64 `json:"brokerEpoch"`
}

// FormatCleanShutdown renders {"version":0,"brokerEpoch":N} (no newline,
// as Kafka's CleanShutdownFileHandler writes it).
func FormatCleanShutdown(brokerEpoch int64) []byte {
	b, _ := json.Marshal(cleanShutdown{Version: 0, BrokerEpoch: brokerEpoch})
	return b
}

// WriteCleanShutdown durably writes the clean-shutdown marker with broker
// epoch -1 (no broker; Kafka's default).
func WriteCleanShutdown(fs vfs.FS, path string) error {
	return WriteCleanShutdownEpoch(fs, path, -1)
}

// WriteCleanShutdownEpoch durably writes the marker with brokerEpoch.
func WriteCleanShutdownEpoch(fs vfs.FS, path string, brokerEpoch int64) error {
	return vfs.WriteFileDurable(fs, path, FormatCleanShutdown(brokerEpoch))
}

// HasCleanShutdown reports whether the marker exists (what counts for
// recovery; its contents do not).
func HasCleanShutdown(fs vfs.FS, path string) (bool, error) {
	_, err := fs.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
	return true, nil
}

// ReadCleanShutdown returns the broker epoch in the marker; ok is false
// when the file is missing.
func ReadCleanShutdown(fs vfs.FS, path string) (brokerEpoch int64, ok bool, err error) {
	if ok, err := HasCleanShutdown(fs, path); !ok || err != nil {
		return -1, false, err
	}
	text, err := readAll(fs, path)
	if err != nil {
		return -1, true, err
	}
	var c cleanShutdown
	if err := json.Unmarshal(text, &c); err != nil {
		return -1, true, &record.CorruptionError{File: path, Line: 1, Reason: err.Error()}
	}
	if c.Version != 0 {
		return -1, true, &record.CorruptionError{File: path, Line: 1, Reason: fmt.Sprintf("unsupported version %d", c.Version)}
	}
	return c.BrokerEpoch, true, nil
}

// RemoveCleanShutdown deletes the marker (at open) and makes the removal
// durable; a missing marker is fine.
func RemoveCleanShutdown(fs vfs.FS, path string) error {
	if err := fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return fs.SyncDir(filepath.Dir(path))
}
