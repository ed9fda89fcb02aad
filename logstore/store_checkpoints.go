package logstore

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// logCheckpoints are one partition's entries in the root checkpoint files.
type logCheckpoints struct {
	recoveryPoint, logStart, cleaner int64
	hasRecoveryPoint                 bool
}

// rootCheckpoints are the root checkpoint files as read at open.
type rootCheckpoints struct {
	recovery, logStart, cleaner map[checkpoint.TopicPartition]int64
}

func (st *Store) readCheckpoints() (rootCheckpoints, error) {
	var rc rootCheckpoints
	var err error
	read := func(name string) map[checkpoint.TopicPartition]int64 {
		if err != nil {
			return nil
		}
		var m map[checkpoint.TopicPartition]int64
		m, err = checkpoint.ReadOffsets(st.fs, st.path(name))
		if isNotExist(err) {
			m, err = nil, nil
		}
		if errors.Is(err, record.ErrCorruption) {
			// Kafka logs and starts over without the file: every partition
			// recovers from offset 0 (or keeps its first segment's base)
			st.logger.WithError(err).Warn("ignoring a malformed checkpoint file")
			m, err = nil, nil
		}
		return m
	}
	rc.recovery = read(kafkaname.RecoveryPointFile)
	rc.logStart = read(kafkaname.LogStartOffsetFile)
	rc.cleaner = read(kafkaname.CleanerOffsetFile)
	return rc, err
}

func (rc rootCheckpoints) forLog(topic string, n int) logCheckpoints {
	tp := checkpoint.TopicPartition{Topic: topic, Partition: n}
	var c logCheckpoints
	c.recoveryPoint, c.hasRecoveryPoint = rc.recovery[tp]
	c.logStart = rc.logStart[tp]
	c.cleaner = rc.cleaner[tp]
	return c
}

// keepCheckpoints holds the entries of a partition that is not opened so
// that writing the checkpoints keeps them. REQUIRES: st.mu held.
func (st *Store) keepCheckpoints(topic string, n int, rc rootCheckpoints) {
	if st.kept == nil {
		st.kept = map[checkpoint.TopicPartition]logCheckpoints{}
	}
	st.kept[checkpoint.TopicPartition{Topic: topic, Partition: n}] = rc.forLog(topic, n)
}

// writeCheckpoints writes the four root offset checkpoint files.
func (st *Store) writeCheckpoints() error {
	if st.opt.ReadOnly {
		return nil
	}
	st.WaitOpened()
	st.cpMu.Lock()
	defer st.cpMu.Unlock()
	st.mu.Lock()
	kept := maps.Clone(st.kept)
	st.mu.Unlock()
	rp := map[checkpoint.TopicPartition]int64{}
	ls := map[checkpoint.TopicPartition]int64{}
	hw := map[checkpoint.TopicPartition]int64{}
	cl := map[checkpoint.TopicPartition]int64{}
	for tp, c := range kept {
		if tp.Topic == metadataTopic {
			continue
		}
		if c.hasRecoveryPoint {
			rp[tp] = c.recoveryPoint
		}
		if c.logStart > 0 {
			ls[tp] = c.logStart
		}
		if c.cleaner > 0 {
			cl[tp] = c.cleaner
		}
	}
	for _, l := range st.Logs() {
		if l.topic == metadataTopic {
			continue
		}
		tp := checkpoint.TopicPartition{Topic: l.topic, Partition: l.partition}
		l.mu.Lock()
		rp[tp] = l.recoveryPoint
		hw[tp] = l.endLocked()
		if l.startOffset > l.segs[0].base {
			ls[tp] = l.startOffset
		}
		if l.cleanerCheckpoint > 0 {
			cl[tp] = l.cleanerCheckpoint
		}
		l.mu.Unlock()
	}
	return errors.Join(
		st.writeOffsets(kafkaname.RecoveryPointFile, rp),
		st.writeOffsets(kafkaname.LogStartOffsetFile, ls),
		st.writeOffsets(kafkaname.ReplicationFile, hw),
		st.writeOffsets(kafkaname.CleanerOffsetFile, cl),
	)
}

// writeOffsets writes one root checkpoint file unless it holds these
// entries already (as last written, or as found on disk the first time).
// REQUIRES: cpMu held.
func (st *Store) writeOffsets(name string, m map[checkpoint.TopicPartition]int64) error {
	data := checkpoint.FormatOffsets(m)
	path := st.path(name)
	saved, ok := st.cpSaved[name]
	if !ok {
		saved, _ = vfs.ReadFile(st.fs, path)
	}
	if saved != nil && bytes.Equal(saved, data) {
		st.cpSaved[name] = saved
		return nil
	}
	delete(st.cpSaved, name)
	if err := checkpoint.WriteOffsets(st.fs, path, m); err != nil {
		return err
	}
	st.cpSaved[name] = data
	return nil
}

// ensureMetaProperties writes a KRaft-style meta.properties when missing.
func (st *Store) ensureMetaProperties() error {
	path := st.path(kafkaname.MetaPropertiesFile)
	if _, err := st.fs.Stat(path); err == nil {
		return nil
	}
	props := map[string]string{
		"version":      "1",
		"cluster.id":   randomUUID(),
		"node.id":      "1",
		"directory.id": randomUUID(),
	}
	if err := checkpoint.WriteMetaProperties(st.fs, path, props); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// randomUUID is a Kafka Uuid in base64url without padding.
func randomUUID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// readTopicID reads partition.metadata of a partition directory.
func (st *Store) readTopicID(dir string) ([16]byte, bool) {
	id, err := checkpoint.ReadPartitionMetadata(st.fs, filepath.Join(dir, kafkaname.PartitionMetadataFile))
	return id, err == nil
}
