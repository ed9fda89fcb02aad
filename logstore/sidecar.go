package logstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// LoadSidecar returns the content of the sidecar file name (stored as
// <name>.partfs in the partition directory, which Kafka ignores).
func (l *Log) LoadSidecar(name string) ([]byte, error) {
	path, err := l.sidecarPath(name)
	if err != nil {
		return nil, err
	}
	f, err := l.fs.Open(path)
	if isNotExist(err) {
		return nil, fmt.Errorf("sidecar %s: %w", path, partlog.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open sidecar %s: %w", path, err)
	}
	defer f.Close()
	data, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("read sidecar %s: %w", path, err)
	}
	return data, nil
}

// SaveSidecar stores data durably (temp file, fsync, rename, dir fsync).
func (l *Log) SaveSidecar(name string, data []byte) error {
	if l.readOnly {
		return fmt.Errorf("sidecar %s: %w", name, partlog.ErrReadOnly)
	}
	path, err := l.sidecarPath(name)
	if err != nil {
		return err
	}
	return vfs.WriteFileDurable(l.fs, path, data)
}

func (l *Log) sidecarPath(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." ||
		strings.HasPrefix(name, "logstore-") {
		return "", fmt.Errorf("sidecar name %q: %w", name, partlog.ErrInvalid)
	}
	return filepath.Join(l.dir, name+sidecarSuffix), nil
}

// sidecarSegment is one segment's entry in logstore-segments.partfs, written
// at clean close and trusted only on the next clean open when the segment
// still has the recorded size.
type sidecarSegment struct {
	Base     int64 `json:"base"`
	Size     int64 `json:"size"`
	Next     int64 `json:"next"`
	Records  int64 `json:"records"`
	MaxTs    int64 `json:"max_ts"`
	OffMaxTs int64 `json:"off_max_ts"`
}

func (l *Log) segmentsSidecarPath() string {
	return filepath.Join(l.dir, segmentsSidecarName+sidecarSuffix)
}

// readSegmentsSidecar returns the recorded segments by base offset (empty
// when missing or unreadable).
func (l *Log) readSegmentsSidecar() map[int64]sidecarSegment {
	out := map[int64]sidecarSegment{}
	f, err := l.fs.Open(l.segmentsSidecarPath())
	if err != nil {
		return out
	}
	defer f.Close()
	data, err := readAll(f)
	var list []sidecarSegment
	if err != nil || json.Unmarshal(data, &list) != nil {
		return out
	}
	l.sidecarSaved = data
	for _, e := range list {
		if e.Next >= e.Base {
			out[e.Base] = e
		}
	}
	return out
}

// writeSegmentsSidecar records every segment's counts for the next clean
// open. Segments not counted yet are recorded with -1 and counted lazily.
// A sidecar that already holds these bytes (read at open or written
// since) is left as it is.
func (l *Log) writeSegmentsSidecar() error {
	if l.readOnly {
		return nil
	}
	l.mu.Lock()
	list := make([]sidecarSegment, 0, len(l.segs))
	for _, s := range l.segs {
		list = append(list, sidecarSegment{Base: s.base, Size: s.size, Next: s.next, Records: s.records,
			MaxTs: s.maxTs, OffMaxTs: s.offMaxTs})
	}
	l.mu.Unlock()
	data, err := json.Marshal(list)
	if err != nil || bytes.Equal(data, l.sidecarSaved) {
		return err
	}
	if err := vfs.WriteFileDurable(l.fs, l.segmentsSidecarPath(), data); err != nil {
		return err
	}
	l.sidecarSaved = data
	return nil
}
