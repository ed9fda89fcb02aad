package inspect

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/record"
)

// TestDumpDecoders: --offsets-decoder prints an offset commit's key and
// value decoded (without --print-data), a tombstone as payload null; with
// --json each record carries "decoded".
func TestDumpDecoders(t *testing.T) {
	k := kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "orders", Partition: 2}
	v := kmsg.OffsetCommitValue{Version: 3, Offset: 41, LeaderEpoch: 0, CommitTimestamp: 1700000000000}
	var enc record.Encoder
	seg, err := enc.AppendBatch(nil, 0, []record.Record{{Timestamp: 1, Key: k.AppendTo(nil), Value: v.AppendTo(nil)}, {Timestamp: 2, Key: k.AppendTo(nil)}}, record.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(file, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := DumpLog(&out, file, DumpOptions{Decoder: internaltopic.ConsumerOffsets}); err != nil {
		t.Fatal(err)
	}
	want := `| offset: 0 CreateTime: 1 keySize: 17 valueSize: 24 sequence: -1 headerKeys: [] type: offset_commit key: {"version":1,"group":"g","topic":"orders","partition":2} payload: {"version":3,"offset":41,"leaderEpoch":0,"metadata":"","commitTimestamp":1700000000000}`
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), `"partition":2} payload: null`) {
		t.Fatalf("text:\n%s\nwant a line\n%s", out.String(), want)
	}
	out.Reset()
	if err := DumpLog(&out, file, DumpOptions{JSON: true, Decoder: internaltopic.ConsumerOffsets}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var m struct {
		Offset  int64 `json:"offset"`
		Decoded struct {
			Type  string         `json:"type"`
			Value map[string]any `json:"value"`
		} `json:"decoded"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m.Decoded.Type != "offset_commit" || m.Decoded.Value["offset"] != 41.0 {
		t.Fatalf("json %v: %s", err, lines[0])
	}
}
