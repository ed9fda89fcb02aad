package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internal/testfixtures"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/record"
)

// TestDumpLogJSONMatchesFixtures: `dump --json --print-data` of every fixture
// gives its expected records (the docs/spec.md §3 fields), plus batch_offset, magic
// and codec.
func TestDumpLogJSONMatchesFixtures(t *testing.T) {
	dir, files := testfixtures.Expected(t)
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			var out bytes.Buffer
			err := DumpLog(&out, filepath.Join(dir, rel), DumpOptions{JSON: true, PrintData: true})
			if err != nil && !(errors.Is(err, record.ErrTruncated) && testfixtures.EndsCut(rel)) {
				t.Fatalf("DumpLog: %v", err)
			}
			want := testutil.ReadFile(t, filepath.Join(dir, rel+".expected.jsonl"))
			compareDump(t, out.String(), string(want), rel)
		})
	}
}

// compareDump compares dump objects with a fixture's expected jsonl
// records, the records franz-go skips (testfixtures.Backwards) apart.
func compareDump(t *testing.T, got, want, rel string) {
	t.Helper()
	var records []string
	for _, line := range testfixtures.Lines(got) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("dump line %q: %v", line, err)
		}
		for _, k := range []string{"batch_offset", "magic", "codec"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("dump line %q lacks %s", line, k)
			}
			delete(m, k)
		}
		b, _ := json.Marshal(m)
		records = append(records, string(b))
	}
	kept, dropped := testfixtures.FranzView(t, records)
	testfixtures.CompareJSONL(t, kept, testfixtures.Lines(want))
	testfixtures.CompareJSONL(t, dropped, testfixtures.Backwards[rel])
}

// TestDumpLogText checks Kafka's text lines on a real broker batch.
func TestDumpLogText(t *testing.T) {
	dir := testfixtures.Dir(t)
	var out bytes.Buffer
	if err := DumpLog(&out, filepath.Join(dir, "kafka-python", "record_batch_data_v2_1.bin"), DumpOptions{PrintData: true}); err != nil {
		t.Fatal(err)
	}
	want := "baseOffset: 1 lastOffset: 2 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 2 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1503229959700 size: 76 magic: 2 compresscodec: none crc: 3361520931 isvalid: true\n" +
		"| offset: 1 CreateTime: 1503229959532 keySize: -1 valueSize: 0 sequence: -1 headerKeys: [] payload: \n" +
		"| offset: 2 CreateTime: 1503229959700 keySize: -1 valueSize: 0 sequence: -1 headerKeys: [] payload: \n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestDumpLogSegmentAndLegacy: a segment file gets Kafka's "Log starting
// offset" line; legacy messages print "offset: N" batch lines.
func TestDumpLogSegmentAndLegacy(t *testing.T) {
	dir := testfixtures.Dir(t)
	src, err := os.ReadFile(filepath.Join(dir, "kafkajs", "fetch_v1_response_gzip.p0.records.bin")) // a V0 gzip wrapper
	if err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(t.TempDir(), "00000000000000000000.log")
	os.WriteFile(seg, src, 0o644)
	var out bytes.Buffer
	if err := DumpLog(&out, seg, DumpOptions{PrintData: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if lines[0] != "Log starting offset: 0" || !strings.HasPrefix(lines[1], "offset: 2 position: 0 NoTimestampType: -1 size: ") ||
		!strings.Contains(lines[1], "magic: 0 compresscodec: gzip") || len(lines) != 5 ||
		!strings.HasPrefix(lines[2], "| offset: 0 NoTimestampType: -1 keySize: ") {
		t.Errorf("got\n%s", out.String())
	}
}

// TestDumpLogCorruption: records before a bad batch are printed, then the
// error names the file and the batch's position.
func TestDumpLogCorruption(t *testing.T) {
	var e record.Encoder
	raw, _ := e.AppendBatch(nil, 0, []record.Record{{Timestamp: 5, Key: []byte("k"), Value: []byte("v")}}, record.BatchOptions{})
	pos := len(raw)
	raw, _ = e.AppendBatch(raw, 1, []record.Record{{Timestamp: 6, Value: []byte("w")}}, record.BatchOptions{})
	raw[len(raw)-1] ^= 0xff
	file := filepath.Join(t.TempDir(), "bad.bin")
	os.WriteFile(file, raw, 0o644)
	for _, opt := range []DumpOptions{{JSON: true}, {PrintData: true}} {
		var out bytes.Buffer
		err := DumpLog(&out, file, opt)
		var ce *record.CorruptionError
		if !errors.As(err, &ce) || ce.Pos != int64(pos) || !strings.Contains(err.Error(), file) {
			t.Fatalf("err = %v, want a corruption at %d naming %s", err, pos, file)
		}
		if opt.JSON && out.String() != `{"batch_offset":0,"magic":2,"codec":"none","offset":0,"timestamp":5,"key":"k","value":"v","headers":[]}`+"\n" {
			t.Errorf("json: %q", out.String())
		}
		if !opt.JSON && (strings.Count(out.String(), "\n") != 2 || !strings.Contains(out.String(), "key: k payload: v")) {
			t.Errorf("text: %q", out.String())
		}
	}
}

// TestDumpLogPartialTail: Kafka's notice in text mode and an ErrTruncated
// error naming the position.
func TestDumpLogPartialTail(t *testing.T) {
	dir := testfixtures.Dir(t)
	var out bytes.Buffer
	file := filepath.Join(dir, "kafkajs", "fetch_v2_response_index_out_of_range.p1.records.bin")
	err := DumpLog(&out, file, DumpOptions{})
	if !errors.Is(err, record.ErrTruncated) || !strings.Contains(err.Error(), "position 129") {
		t.Errorf("err = %v", err)
	}
	if !strings.HasSuffix(out.String(), "Found 9 invalid bytes at the end of fetch_v2_response_index_out_of_range.p1.records.bin\n") {
		t.Errorf("got\n%s", out.String())
	}
}
