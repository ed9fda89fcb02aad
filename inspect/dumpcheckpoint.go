package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/vfs"
)

// DumpCheckpoint prints a checkpoint or metadata file of a log directory,
// chosen by its name: partition.metadata, meta.properties,
// .kafka_cleanshutdown, leader-epoch-checkpoint, or else an offset
// checkpoint ("topic partition offset" lines). JSON prints one object per
// entry (one object for partition.metadata, meta.properties and the
// clean-shutdown marker).
func DumpCheckpoint(w io.Writer, file string, opt DumpOptions) error {
	switch filepath.Base(file) {
	case kafkaname.PartitionMetadataFile:
		return dumpPartitionMetadata(w, file, opt.JSON)
	case kafkaname.MetaPropertiesFile:
		return dumpMetaProperties(w, file, opt.JSON)
	case kafkaname.CleanShutdownFile:
		return dumpCleanShutdown(w, file, opt.JSON)
	case kafkaname.LeaderEpochFile:
		return dumpLeaderEpochs(w, file, opt.JSON)
	}
	return dumpOffsets(w, file, opt.JSON)
}

// mustExist makes a missing file an error (the readers treat it as empty).
func mustExist(file string) error {
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}

// dumpEntries prints the entries read reads from file, one object each
// (row); a missing file is an error.
func dumpEntries[T any](w io.Writer, file string, asJSON bool, read func(vfs.FS, string) ([]T, error), row func(T) []kv) error {
	if err := mustExist(file); err != nil {
		return err
	}
	es, err := read(vfs.Default, file)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := writeObject(w, asJSON, row(e)); err != nil {
			return err
		}
	}
	return nil
}

func dumpOffsets(w io.Writer, file string, asJSON bool) error {
	var m map[checkpoint.TopicPartition]int64
	read := func(fs vfs.FS, path string) (tps []checkpoint.TopicPartition, err error) {
		m, err = checkpoint.ReadOffsets(fs, path)
		return checkpoint.SortedPartitions(m), err
	}
	return dumpEntries(w, file, asJSON, read, func(tp checkpoint.TopicPartition) []kv {
		return []kv{{"topic", tp.Topic}, {"partition", tp.Partition}, {"offset", m[tp]}}
	})
}

func dumpLeaderEpochs(w io.Writer, file string, asJSON bool) error {
	return dumpEntries(w, file, asJSON, checkpoint.ReadLeaderEpochs, func(e checkpoint.EpochEntry) []kv {
		return []kv{{"epoch", e.Epoch}, {"start_offset", e.StartOffset}}
	})
}

func dumpPartitionMetadata(w io.Writer, file string, asJSON bool) error {
	id, err := checkpoint.ReadPartitionMetadata(vfs.Default, file)
	if err != nil {
		return err
	}
	return writeObject(w, asJSON, []kv{{"version", 0}, {"topic_id", checkpoint.UUID(id).String()}})
}

func dumpMetaProperties(w io.Writer, file string, asJSON bool) error {
	m, err := checkpoint.ReadMetaProperties(vfs.Default, file)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if asJSON {
		b, _ := json.Marshal(m) // map keys are sorted
		_, err := fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for _, k := range keys {
		if _, err := fmt.Fprintf(w, "%s=%s\n", k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

func dumpCleanShutdown(w io.Writer, file string, asJSON bool) error {
	epoch, ok, err := checkpoint.ReadCleanShutdown(vfs.Default, file)
	if err != nil {
		return err
	}
	if !ok {
		return mustExist(file)
	}
	return writeObject(w, asJSON, []kv{{"version", 0}, {"brokerEpoch", epoch}})
}

// kv is one field of an output line, in order.
type kv struct {
	k string
	v any
}

// writeObject prints fields as "k: v k: v" or as one JSON object in order.
func writeObject(w io.Writer, asJSON bool, fields []kv) error {
	var b strings.Builder
	if asJSON {
		b.WriteByte('{')
	}
	for i, f := range fields {
		if asJSON {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f.k)
			v, _ := json.Marshal(f.v)
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s: %v", f.k, f.v)
	}
	if asJSON {
		b.WriteByte('}')
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}
