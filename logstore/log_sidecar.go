package logstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strings"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// LoadSidecar returns the content of the sidecar file name (stored as
// <name>.partfs in the partition directory, which Kafka ignores).
func (l *Log) LoadSidecar(name string) ([]byte, error) {
	path, err := l.sidecarPath(name)
	if err != nil {
		return nil, err
	}
	data, err := vfs.ReadFile(l.fs, path)
	if isNotExist(err) {
		return nil, fmt.Errorf("sidecar %s: %w", path, partlog.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read sidecar %s: %w", path, err)
	}
	return data, nil
}

// SaveSidecar stores data durably (temp file, fsync, rename, dir fsync).
func (l *Log) SaveSidecar(name string, data []byte) error {
	return l.writeSidecar(name, data, vfs.WriteFileDurable)
}

// WriteSidecar is SaveSidecar without a sync: the sidecar is durable after
// the store's next SyncAll (partlog.SidecarWriter).
func (l *Log) WriteSidecar(name string, data []byte) error {
	return l.writeSidecar(name, data, vfs.WriteFileAtomic)
}

func (l *Log) writeSidecar(name string, data []byte, write func(vfs.FS, string, []byte) error) error {
	if l.readOnly {
		return fmt.Errorf("sidecar %s: %w", name, partlog.ErrReadOnly)
	}
	path, err := l.sidecarPath(name)
	if err != nil {
		return err
	}
	return write(l.fs, path, data)
}

func (l *Log) sidecarPath(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." ||
		strings.HasPrefix(name, "logstore-") {
		return "", fmt.Errorf("sidecar name %q: %w", name, partlog.ErrInvalid)
	}
	return filepath.Join(l.dir, name+sidecarSuffix), nil
}

// sidecarSegment is one segment's entry in logstore-segments.partfs, written
// at clean close. It is derived: the next clean open uses an entry only when
// the segment still has the recorded size and the batch recorded at LastPos
// (read and CRC-checked) ends the file with offsets that agree with Next
// (checkEntry: its header only, as Kafka's clean load reads the active
// segment's last batches; a read checks the CRC); a counter it cannot check
// is bounded by what it can.
type sidecarSegment struct {
	Base     int64 `json:"base"`
	Size     int64 `json:"size"`
	Next     int64 `json:"next"`
	LastPos  int64 `json:"last_pos"`
	Records  int64 `json:"records"`
	MaxTs    int64 `json:"max_ts"`
	OffMaxTs int64 `json:"off_max_ts"`
}

// segmentsSidecar is the file: the body and the CRC-32C of its JSON as
// stored.
type segmentsSidecar struct {
	Version int             `json:"version"`
	CRC     uint32          `json:"crc32c"`
	Body    json.RawMessage `json:"body"`
}

// sidecarBody is what the checksum covers: the log start offset at the
// clean close (partfs never raises it above the first segment's base by
// itself, so a log-start checkpoint above it later is not trusted) and
// the segments.
type sidecarBody struct {
	LogStart int64            `json:"log_start"`
	Segments []sidecarSegment `json:"segments"`
	TopicGen uint64           `json:"topic_gen,omitempty"` // the topic entry's generation (topic_gen.go)
}

// sidecarView is a read sidecar: entries by base offset, and the log
// start recorded (-1 when none could be read).
type sidecarView struct {
	segs     map[int64]sidecarSegment
	logStart int64
	topicGen uint64
}

const segmentsSidecarVersion = 3

func (l *Log) segmentsSidecarPath() string {
	return filepath.Join(l.dir, segmentsSidecarName+sidecarSuffix)
}

// readSegmentsSidecar returns the recorded segments by base offset: empty,
// with a log line, when the file is missing (found is false), unreadable,
// of another version or failing its checksum.
func (l *Log) readSegmentsSidecar() (out sidecarView, found bool) {
	out = sidecarView{segs: map[int64]sidecarSegment{}, logStart: -1}
	path := l.segmentsSidecarPath()
	data, err := vfs.ReadFile(l.fs, path)
	if isNotExist(err) {
		return out, false
	}
	var doc segmentsSidecar
	var body sidecarBody
	switch {
	case err != nil:
	case json.Unmarshal(data, &doc) != nil:
		err = fmt.Errorf("not a JSON object of version %d", segmentsSidecarVersion)
	case doc.Version != segmentsSidecarVersion:
		err = fmt.Errorf("version %d, want %d", doc.Version, segmentsSidecarVersion)
	case crc32.Checksum(doc.Body, topicsCRC) != doc.CRC:
		err = fmt.Errorf("checksum %08x does not match the entries' %08x", doc.CRC, crc32.Checksum(doc.Body, topicsCRC))
	default:
		err = json.Unmarshal(doc.Body, &body)
	}
	if err != nil {
		l.logger.WithError(err).WithField("file", path).
			Warn("segments sidecar ignored: counts and ends are taken from the segments")
		return out, true
	}
	l.sidecarSaved = data
	for _, e := range body.Segments {
		out.segs[e.Base] = e
	}
	out.logStart = body.LogStart
	out.topicGen = body.TopicGen
	return out, true
}

// checkEntry cross-checks e with segment s (limit: the next segment's base,
// MaxInt64 for the active one) without scanning it: the file has e.Size
// bytes, the batch header at e.LastPos is one that ends the file, its last
// offset is below e.Next (exactly below it for the active segment) and
// e.Next is not past limit; records and timestamps are bounded by them.
func (s *segment) checkEntry(e sidecarSegment, limit int64, active bool) error {
	switch {
	case e.Size != s.size:
		return fmt.Errorf("size %d, the file has %d", e.Size, s.size)
	case s.size == 0:
		if e.Next != s.base || e.Records > 0 {
			return fmt.Errorf("empty segment with next %d and %d records", e.Next, e.Records)
		}
		return nil
	case e.LastPos < 0 || e.LastPos >= s.size:
		return fmt.Errorf("last batch position %d outside the file's %d bytes", e.LastPos, s.size)
	}
	var buf [record.BatchHeaderSize]byte
	n, err := s.log.ReadAt(buf[:min(int64(len(buf)), s.size-e.LastPos)], e.LastPos)
	if err != nil && n < len(buf) && int64(n) < s.size-e.LastPos {
		return fmt.Errorf("read the batch header at %d: %w", e.LastPos, err)
	}
	h, err := record.ParseHeader(buf[:n])
	if err != nil {
		return fmt.Errorf("no batch header at position %d: %w", e.LastPos, err)
	}
	last := h.LastOffset()
	switch {
	case e.LastPos+h.Size() != s.size:
		return fmt.Errorf("the batch at %d ends at %d, the file at %d", e.LastPos, e.LastPos+h.Size(), s.size)
	case h.BaseOffset < s.base || last+1 > e.Next || e.Next > limit || active && last+1 != e.Next:
		return fmt.Errorf("next offset %d, the last batch holds %d..%d (limit %d)", e.Next, h.BaseOffset, last, limit)
	case e.Records > e.Next-s.base:
		return fmt.Errorf("%d records in offsets [%d, %d)", e.Records, s.base, e.Next)
	case h.MaxTimestamp > e.MaxTs || e.MaxTs >= 0 && (e.OffMaxTs < s.base || e.OffMaxTs >= e.Next):
		return fmt.Errorf("max timestamp %d at offset %d, the last batch's is %d", e.MaxTs, e.OffMaxTs, h.MaxTimestamp)
	}
	s.lastPos = e.LastPos
	return nil
}

// writeSegmentsSidecar records every segment's counts for the next clean
// open. Segments not counted yet are recorded with -1 and counted lazily.
// A sidecar that already holds these bytes (read at open or written
// since) is left as it is. With sync unset the file is replaced without
// an fsync: the caller syncs the filesystem before anything trusts it.
func (l *Log) writeSegmentsSidecar(sync bool) error {
	if l.readOnly {
		return nil
	}
	l.mu.Lock()
	if l.werr != nil { // the next open recovers this partition
		l.mu.Unlock()
		return nil
	}
	body := sidecarBody{LogStart: l.startOffset, TopicGen: l.topicGen}
	list := make([]sidecarSegment, 0, len(l.segs))
	for _, s := range l.segs {
		list = append(list, sidecarSegment{Base: s.base, Size: s.size, Next: s.next, LastPos: s.lastPos,
			Records: s.records, MaxTs: s.maxTs, OffMaxTs: s.offMaxTs})
	}
	l.mu.Unlock()
	body.Segments = list
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	data, err := json.Marshal(segmentsSidecar{Version: segmentsSidecarVersion,
		CRC: crc32.Checksum(raw, topicsCRC), Body: raw})
	if err != nil || bytes.Equal(data, l.sidecarSaved) {
		return err
	}
	write := vfs.WriteFileDurable
	if !sync {
		write = vfs.WriteFileAtomic
	}
	if err := write(l.fs, l.segmentsSidecarPath(), data); err != nil {
		return err
	}
	l.sidecarSaved = data
	return nil
}
