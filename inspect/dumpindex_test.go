package inspect

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/internal/testfixtures"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// segment writes a .log of n batches of 3 records (offsets from base,
// timestamps 1000+10*i) and indexes built with Kafka's rule (interval 100
// bytes), left untrimmed (preallocated) when trim is false.
func segment(t *testing.T, dir string, base int64, n int, trim bool) (logPath string, batches []record.BatchHeader) {
	t.Helper()
	var enc record.Encoder
	var log []byte
	for i := 0; i < n; i++ {
		recs := []record.Record{
			{Timestamp: int64(1000 + 10*i), Value: []byte(fmt.Sprintf("value-%d-a", i))},
			{Timestamp: int64(1005 + 10*i), Value: []byte(fmt.Sprintf("value-%d-b", i))},
			{Timestamp: int64(1001 + 10*i), Value: []byte(fmt.Sprintf("value-%d-c", i))},
		}
		var err error
		start := len(log)
		log, err = enc.AppendBatch(log, base+int64(3*i), recs, record.BatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := record.ParseHeader(log[start:])
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, h)
	}
	logPath = filepath.Join(dir, fmt.Sprintf("%020d.log", base))
	if err := os.WriteFile(logPath, log, 0o644); err != nil {
		t.Fatal(err)
	}
	buildIndexes(t, dir, base, batches, trim)
	return logPath, batches
}

func buildIndexes(t *testing.T, dir string, base int64, batches []record.BatchHeader, trim bool) {
	t.Helper()
	open := func(suffix string) vfs.File {
		f, err := vfs.Default.Create(filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	ox, err := index.OpenOffsetIndex(open(".index"), base, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := index.OpenTimeIndex(open(".timeindex"), base, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	b := index.NewBuilder(ox, tx, 100, 0)
	pos := int64(0)
	for _, h := range batches {
		if err := b.Add(pos, h.Size(), h.LastOffset(), h.MaxTimestamp, h.LastOffset()); err != nil {
			t.Fatal(err)
		}
		pos += h.Size()
	}
	if trim {
		b.Finish()
		ox.Close()
		tx.Close()
		return
	}
	ox.Release()
	tx.Release()
}

// expected derives the text and JSON of the index entries from the batches
// with the same rule, independently of package index.
func expectedEntries(batches []record.BatchHeader) (offsets, times []string) {
	pos, since, maxTs, offMax := int64(0), int64(0), int64(-1), int64(-1)
	for _, h := range batches {
		if h.MaxTimestamp > maxTs {
			maxTs, offMax = h.MaxTimestamp, h.LastOffset()
		}
		if since > 100 {
			offsets = append(offsets, fmt.Sprintf("offset: %d position: %d", h.LastOffset(), pos))
			times = append(times, fmt.Sprintf("timestamp: %d offset: %d", maxTs, offMax))
			since = 0
		}
		since += h.Size()
		pos += h.Size()
	}
	return offsets, times
}

func dump(t *testing.T, file string, opt DumpOptions) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	err := DumpIndex(&buf, file, opt)
	return buf.String(), err
}

func TestDumpIndexStopsAtPreallocatedZeros(t *testing.T) {
	dir := t.TempDir()
	_, batches := segment(t, dir, 40, 12, false)
	wantO, wantT := expectedEntries(batches)
	if len(wantO) < 3 {
		t.Fatalf("test segment too small: %d entries", len(wantO))
	}
	if fi, _ := os.Stat(filepath.Join(dir, "00000000000000000040.index")); fi.Size() != 1<<16 {
		t.Fatalf("index not preallocated: %d", fi.Size())
	}
	verdict := func(suffix string, entries, entrySize int) string {
		fi, err := os.Stat(filepath.Join(dir, "00000000000000000040"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		tail := int(fi.Size()) - int(fi.Size())%entrySize - entries*entrySize
		return fmt.Sprintf("Verified %d entries against 00000000000000000040.log: all match (then %d bytes of preallocated zero entries, unused)\n", entries, tail)
	}
	got, err := dump(t, filepath.Join(dir, "00000000000000000040.index"), DumpOptions{VerifyIndex: true})
	if err != nil || got != strings.Join(wantO, "\n")+"\n"+verdict(".index", len(wantO), 8) {
		t.Fatalf("offset dump (%v):\n%s\nwant:\n%s", err, got, strings.Join(wantO, "\n"))
	}
	got, err = dump(t, filepath.Join(dir, "00000000000000000040.timeindex"), DumpOptions{VerifyIndex: true})
	if err != nil || got != strings.Join(wantT, "\n")+"\n"+verdict(".timeindex", len(wantT), 12) {
		t.Fatalf("time dump (%v):\n%s\nwant:\n%s", err, got, strings.Join(wantT, "\n"))
	}
}

func TestDumpIndexJSON(t *testing.T) {
	dir := t.TempDir()
	segment(t, dir, 0, 8, true)
	got, err := dump(t, filepath.Join(dir, "00000000000000000000.index"), DumpOptions{JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := dump(t, filepath.Join(dir, "00000000000000000000.index"), DumpOptions{})
	jl, tl := strings.Split(strings.TrimSpace(got), "\n"), strings.Split(strings.TrimSpace(text), "\n")
	if len(jl) != len(tl) || len(jl) == 0 {
		t.Fatalf("json %d lines, text %d", len(jl), len(tl))
	}
	for i := range jl {
		var off, pos int64
		fmt.Sscanf(tl[i], "offset: %d position: %d", &off, &pos)
		if want := fmt.Sprintf(`{"offset":%d,"position":%d}`, off, pos); jl[i] != want {
			t.Fatalf("line %d: %s, want %s", i, jl[i], want)
		}
	}
	got, _ = dump(t, filepath.Join(dir, "00000000000000000000.timeindex"), DumpOptions{JSON: true})
	last := strings.Split(strings.TrimSpace(got), "\n")
	// the trimmed (closed) time index ends with the close entry: max ts 1075 at offset 23
	if want := `{"timestamp":1075,"offset":23}`; last[len(last)-1] != want {
		t.Fatalf("last time entry %s, want %s", last[len(last)-1], want)
	}
}

func TestDumpIndexReportsMismatchesLikeKafka(t *testing.T) {
	dir := t.TempDir()
	_, batches := segment(t, dir, 0, 12, true)
	idx := filepath.Join(dir, "00000000000000000000.index")
	data, _ := os.ReadFile(idx)
	// point entry 1 at the position of the first batch (last offset 2)
	copy(data[12:16], []byte{0, 0, 0, 0})
	os.WriteFile(idx, data, 0o644)
	rel, _ := index.DecodeOffsetEntry(data[8:])
	got, err := dump(t, idx, DumpOptions{VerifyIndex: true})
	if !errors.Is(err, ErrIndexMismatch) {
		t.Fatalf("err %v", err)
	}
	want := fmt.Sprintf("Mismatches in :%s\n  Index offset: %d, log offset: %d\nVerified %d entries against 00000000000000000000.log: 1 problems: the index does not match the log\n",
		idx, rel, batches[0].LastOffset(), len(data)/8)
	if !strings.HasSuffix(got, want) {
		t.Fatalf("output:\n%s\nwant suffix:\n%s", got, want)
	}
	problems, err := VerifyIndex(idx)
	if err != nil || len(problems) != 1 || problems[0].A != int64(rel) {
		t.Fatalf("VerifyIndex: %v %v", problems, err)
	}
	got, _ = dump(t, idx, DumpOptions{VerifyIndex: true, JSON: true})
	wantJSON := fmt.Sprintf(`{"file":%q,"index_offset":%d,"log_offset":%d,"mismatch":"offset_mismatch"}`, idx, rel, batches[0].LastOffset())
	if !strings.Contains(got, wantJSON) {
		t.Fatalf("json output:\n%s\nwant line %s", got, wantJSON)
	}
}

func TestDumpTimeIndexReportsMismatches(t *testing.T) {
	dir := t.TempDir()
	segment(t, dir, 0, 12, true)
	tidx := filepath.Join(dir, "00000000000000000000.timeindex")
	data, _ := os.ReadFile(tidx)
	ts0, rel0 := index.DecodeTimeEntry(data)
	copy(data[0:8], index.EncodeTimeEntry(nil, ts0+1, rel0)[:8]) // wrong timestamp
	copy(data[20:24], index.EncodeTimeEntry(nil, 0, 1000)[8:12]) // offset past the log
	os.WriteFile(tidx, data, 0o644)
	got, err := dump(t, tidx, DumpOptions{VerifyIndex: true})
	if !errors.Is(err, ErrIndexMismatch) {
		t.Fatalf("err %v\n%s", err, got)
	}
	for _, want := range []string{
		fmt.Sprintf("Found timestamp mismatch in :%s\n  Index timestamp: %d, log timestamp: %d\n", tidx, ts0+1, ts0),
		fmt.Sprintf("The following indexed offsets are not found in the log.\nIndexed offset: %d, found log offset: %d\n", 1000, -1),
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("output:\n%s\nmissing:\n%s", got, want)
		}
	}
}

// TestVerifyIndexOnRealLegacyData indexes a real mixed V1/V2 record set
// (kafkajs fixture: 1 611 v1 messages then v2 batches) with Kafka's rule
// and verifies the dump against it.
func TestVerifyIndexOnRealLegacyData(t *testing.T) {
	src := testfixtures.Path(t, "kafkajs/fetch_v4_response_mixed_formats.p0.records.bin")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sc := record.NewBytesScanner(data, "fixture")
	var batches []record.BatchHeader
	for sc.Next() {
		batches = append(batches, sc.Batch().Header)
	}
	if len(batches) < 100 {
		t.Fatalf("only %d batches (%v)", len(batches), sc.Err())
	}
	base := batches[0].BaseOffset
	if batches[0].Magic < 2 {
		base = batches[0].LastOffset()
	}
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.log", base)), data, 0o644)
	buildIndexes(t, dir, base, batches, true)
	for suffix, min := range map[string]int{".index": 100, ".timeindex": 3} {
		out, err := dump(t, filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix)), DumpOptions{VerifyIndex: true})
		if err != nil || strings.Count(out, "\n") < min {
			t.Fatalf("%s: %v\n%s", suffix, err, out)
		}
	}
}

func TestDumpIndexErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := dump(t, filepath.Join(dir, "00000000000000000000.index"), DumpOptions{}); err == nil {
		t.Fatal("missing file")
	}
	bad := filepath.Join(dir, "notanoffset.index")
	os.WriteFile(bad, make([]byte, 8), 0o644)
	if _, err := dump(t, bad, DumpOptions{}); err == nil {
		t.Fatal("bad name accepted")
	}
	idx := filepath.Join(dir, "00000000000000000007.index")
	os.WriteFile(idx, index.EncodeOffsetEntry(nil, 1, 0), 0o644)
	if _, err := dump(t, idx, DumpOptions{VerifyIndex: true}); err == nil || !strings.Contains(err.Error(), ".log") {
		t.Fatalf("verify without a .log: %v", err)
	}
}

func TestDumpCheckpoints(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"recovery-point-offset-checkpoint": "0\n2\nt 1 5\nt 0 9\n",
		"leader-epoch-checkpoint":          "0\n1\n0 0\n",
		"partition.metadata":               "version: 0\ntopic_id: jhorPE1eb3CBkqO0xdbn-A",
		"meta.properties":                  "#\n#Mon Nov 30 01:07:58 UTC 2026\nnode.id=1\nversion=1\n",
		".kafka_cleanshutdown":             `{"version":0,"brokerEpoch":-1}`,
	}
	for name, text := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	want := map[string][2]string{
		"recovery-point-offset-checkpoint": {"topic: t partition: 0 offset: 9\ntopic: t partition: 1 offset: 5\n",
			`{"topic":"t","partition":0,"offset":9}` + "\n" + `{"topic":"t","partition":1,"offset":5}` + "\n"},
		"leader-epoch-checkpoint": {"epoch: 0 start_offset: 0\n", `{"epoch":0,"start_offset":0}` + "\n"},
		"partition.metadata":      {"version: 0 topic_id: jhorPE1eb3CBkqO0xdbn-A\n", `{"version":0,"topic_id":"jhorPE1eb3CBkqO0xdbn-A"}` + "\n"},
		"meta.properties":         {"node.id=1\nversion=1\n", `{"node.id":"1","version":"1"}` + "\n"},
		".kafka_cleanshutdown":    {"version: 0 brokerEpoch: -1\n", `{"version":0,"brokerEpoch":-1}` + "\n"},
	}
	for name, w := range want {
		for i, asJSON := range []bool{false, true} {
			var buf bytes.Buffer
			if err := DumpCheckpoint(&buf, filepath.Join(dir, name), DumpOptions{JSON: asJSON}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if buf.String() != w[i] {
				t.Errorf("%s json=%v:\n%q\nwant\n%q", name, asJSON, buf.String(), w[i])
			}
		}
	}
	os.WriteFile(filepath.Join(dir, "bad-checkpoint"), []byte("0\n3\nt 0 1\n"), 0o644)
	err := DumpCheckpoint(&bytes.Buffer{}, filepath.Join(dir, "bad-checkpoint"), DumpOptions{})
	if err == nil || !strings.Contains(err.Error(), "bad-checkpoint") || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("bad checkpoint: %v", err)
	}
	if err := DumpCheckpoint(&bytes.Buffer{}, filepath.Join(dir, "missing-checkpoint"), DumpOptions{}); err == nil {
		t.Fatal("missing file dumped")
	}
}

// TestDumpTxnIndex: each aborted transaction of a .txnindex is one line
// (or JSON object); a torn last entry is an error after the whole ones.
func TestDumpTxnIndex(t *testing.T) {
	file := filepath.Join(t.TempDir(), "00000000000000000000.txnindex")
	b := index.AppendTxnEntry(nil, index.AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 9, LastStableOffset: 3})
	b = index.AppendTxnEntry(b, index.AbortedTxn{ProducerID: 1 << 40, FirstOffset: 12, LastOffset: 20, LastStableOffset: 10})
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := DumpTxnIndex(&out, file, DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "version: 0 producerId: 7 firstOffset: 3 lastOffset: 9 lastStableOffset: 3\n" +
		"version: 0 producerId: 1099511627776 firstOffset: 12 lastOffset: 20 lastStableOffset: 10\n"
	if out.String() != want {
		t.Errorf("text dump:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := DumpTxnIndex(&out, file, DumpOptions{JSON: true}); err != nil ||
		!strings.HasPrefix(out.String(), `{"version":0,"producer_id":7,"first_offset":3,"last_offset":9,"last_stable_offset":3}`+"\n") {
		t.Errorf("json dump (%v):\n%s", err, out.String())
	}
	if err := os.WriteFile(file, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := DumpTxnIndex(&out, file, DumpOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a multiple of 34") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("torn entry: %v\n%s", err, out.String())
	}
}

// TestVerifyTimeIndexAcceptsKafka3Entries writes a partition whose time
// index entries give, as Kafka 3.x does, the offset of the first record
// carrying the batch's largest timestamp (the middle record of each
// batch), not the batch's last offset as Kafka 2.x does: neither dump
// --verify-index nor check reports damage; an offset past the log still
// is one.
func TestVerifyTimeIndexAcceptsKafka3Entries(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "t-0")
	os.MkdirAll(dir, 0o755)
	segment(t, dir, 0, 12, true)
	tidx := filepath.Join(dir, "00000000000000000000.timeindex")
	b, _ := os.ReadFile(tidx)
	if len(b) < 24 {
		t.Fatalf("time index of %d bytes", len(b))
	}
	for at := 0; at+12 <= len(b); at += 12 {
		ts, rel := index.DecodeTimeEntry(b[at:])
		copy(b[at:], index.EncodeTimeEntry(nil, ts, rel-1)) // the "b" record: largest timestamp
	}
	os.WriteFile(tidx, b, 0o644)
	if got, err := dump(t, tidx, DumpOptions{VerifyIndex: true}); err != nil {
		t.Fatalf("Kafka 3.x entries reported: %v\n%s", err, got)
	}
	if damaged, out := runCheck(t, data); damaged {
		t.Fatalf("check reports Kafka 3.x time index entries as damage:\n%s", out)
	}
	copy(b[20:24], index.EncodeTimeEntry(nil, 0, 1000)[8:12])
	os.WriteFile(tidx, b, 0o644)
	if damaged, out := runCheck(t, data); !damaged || !strings.Contains(out, "Indexed offset: 1000") {
		t.Fatalf("an entry past the log not reported:\n%s", out)
	}
}
