package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/inspect"
	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/record"
)

// controlKey is a control record's key: version 0 and the type.
func controlKey(typ int16) []byte {
	return binary.BigEndian.AppendUint16([]byte{0, 0}, uint16(typ))
}

// TestDumpKRaftSnapshot dumps a KRaft metadata snapshot
// (<end offset>-<epoch>.checkpoint): a snapshot header control batch, a
// batch of metadata records, a footer control batch, read as a log with
// the metadata decoder rather than refused as a text checkpoint.
func TestDumpKRaftSnapshot(t *testing.T) {
	var enc record.Encoder
	header := binary.BigEndian.AppendUint64([]byte{0, 0}, 1_700_000_000_000) // version 0, lastContainedLogTimestamp
	header = append(header, 0)                                               // no tagged fields
	seg, err := enc.AppendBatch(nil, 0, []record.Record{{Timestamp: 1, Key: controlKey(3), Value: header}}, record.BatchOptions{Control: true})
	if err != nil {
		t.Fatal(err)
	}
	topic := append(binary.AppendUvarint(nil, uint64(len("orders")+1)), "orders"...)
	topic = append(topic, make([]byte, 16)...) // topic id
	topic = append(topic, 0)                   // no tagged fields
	value := append([]byte{1, 2, 0}, topic...) // frame version 1, TopicRecord (2), version 0
	if seg, err = enc.AppendBatch(seg, 1, []record.Record{{Timestamp: 1, Value: value}}, record.BatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if seg, err = enc.AppendBatch(seg, 2, []record.Record{{Timestamp: 1, Key: controlKey(4), Value: []byte{0, 0, 0}}}, record.BatchOptions{Control: true}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "00000000000000000035-0000000001.checkpoint")
	if err := os.WriteFile(file, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := dumpFile(&out, file, inspect.DumpOptions{Decoder: internaltopic.ClusterMetadata}); err != nil {
		t.Fatalf("dump: %v\n%s", err, out.String())
	}
	for _, want := range []string{"SNAPSHOT_HEADER", `TopicRecord`, `"name":"orders"`, "SNAPSHOT_FOOTER"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}
