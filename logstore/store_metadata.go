package logstore

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// metadataTopic is KRaft's metadata log. A broker's raft layer owns it,
// not its log manager: partfs reads it (its records give the topics'
// configuration), never writes it, and leaves it out of the root
// checkpoint files as Kafka does.
const metadataTopic = internaltopic.ClusterMetadataName

// snapshotName is a KRaft snapshot of the metadata log: the offset it
// covers up to (exclusive) and the epoch (raft's Snapshots.java).
var snapshotName = regexp.MustCompile(`^([0-9]{20})-([0-9]{10})\.checkpoint$`)

// brokerConfigs folds the metadata into each topic's configuration (the
// latest ConfigRecords): the newest snapshot, then the log's records after
// it, read as a consumer reads them. It fails when the metadata cannot be
// read whole: a configuration missing a key could delete data (a
// retention.ms=-1 lost), so the caller opens no topic then.
func (st *Store) brokerConfigs(t *topic) (map[string]map[string]string, error) {
	if t == nil || len(t.logs) == 0 || t.logs[0] == nil {
		return nil, fmt.Errorf("%s-0 not opened", metadataTopic)
	}
	l := t.logs[0]
	var c internaltopic.Configs
	from, err := st.applySnapshot(l.dir, &c)
	if err != nil {
		return nil, err
	}
	snap, release := l.Segments()
	defer release()
	if len(snap) > 0 && snap[0].Base > from {
		return nil, fmt.Errorf("%s: the log starts at offset %d and no snapshot covers the offsets before it", l.dir, snap[0].Base)
	}
	for _, sg := range snap {
		if sg.Next <= from {
			continue
		}
		err := l.Read(sg, max(from, sg.Base), func(r *record.Record) bool {
			c.Apply(r.Value)
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("read %s segment %d: %w", l.dir, sg.Base, err)
		}
	}
	out := map[string]map[string]string{}
	for _, name := range c.Topics() {
		out[name] = c.Topic(name)
	}
	return out, nil
}

// applySnapshot folds the newest snapshot in dir into c and returns the
// offset the log's records take over from (0 without a snapshot).
func (st *Store) applySnapshot(dir string, c *internaltopic.Configs) (int64, error) {
	des, err := st.fs.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", dir, err)
	}
	name, end := "", int64(0)
	for _, fi := range des {
		m := snapshotName.FindStringSubmatch(fi.Name())
		if m == nil || !fi.Type().IsRegular() {
			continue
		}
		if off, err := strconv.ParseInt(m[1], 10, 64); err == nil && off >= end {
			name, end = fi.Name(), off
		}
	}
	if name == "" {
		return 0, nil
	}
	path := filepath.Join(dir, name)
	f, err := st.fs.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	data, err := vfs.ReadAll(f)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	var dec record.Decoder
	sc := record.NewBytesScanner(data, path)
	for sc.Next() {
		if sc.Batch().Header.IsControl() {
			continue
		}
		if err := dec.Records(sc.Batch(), func(r *record.Record) bool { c.Apply(r.Value); return true }); err != nil {
			return 0, err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return end, nil
}
