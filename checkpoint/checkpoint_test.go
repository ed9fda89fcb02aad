package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

func newFS(t *testing.T) *vfs.CrashFS {
	t.Helper()
	fs := vfs.NewCrashFS()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	fs.SyncDir("/")
	return fs
}

func put(t *testing.T, fs vfs.FS, name, text string) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(text))
	f.Close()
}

func get(t *testing.T, fs vfs.FS, name string) string {
	t.Helper()
	b, err := vfs.ReadFile(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOffsetsRoundTripBytes(t *testing.T) {
	fs := newFS(t)
	m := map[TopicPartition]int64{{"b", 0}: 7, {"a", 10}: 3, {"a", 2}: 1 << 40}
	if err := WriteOffsets(fs, "/d/"+kafkaname.RecoveryPointFile, m); err != nil {
		t.Fatal(err)
	}
	want := "0\n3\na 2 1099511627776\na 10 3\nb 0 7\n"
	crashed := fs.Crash() // durable: survives a crash
	if got := get(t, crashed, "/d/"+kafkaname.RecoveryPointFile); got != want {
		t.Fatalf("bytes %q, want %q", got, want)
	}
	back, err := ReadOffsets(crashed, "/d/"+kafkaname.RecoveryPointFile)
	if err != nil || len(back) != 3 || back[TopicPartition{"a", 2}] != 1<<40 {
		t.Fatalf("read back %v %v", back, err)
	}
}

func TestOffsetsEmptyAndMissing(t *testing.T) {
	fs := newFS(t)
	for _, text := range []string{"", "0\n", "0\n0\n"} {
		put(t, fs, "/d/c", text)
		m, err := ReadOffsets(fs, "/d/c")
		if err != nil || len(m) != 0 {
			t.Fatalf("%q: %v %v", text, m, err)
		}
	}
	if m, err := ReadOffsets(fs, "/d/none"); err != nil || len(m) != 0 {
		t.Fatalf("missing: %v %v", m, err)
	}
	if err := WriteOffsets(fs, "/d/e", nil); err != nil {
		t.Fatal(err)
	}
	if got := get(t, fs, "/d/e"); got != "0\n0\n" {
		t.Fatalf("empty checkpoint %q", got)
	}
}

func TestOffsetsErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		text string
		line int
	}{
		{"1\n0\n", 1},
		{"x\n", 1},
		{"0\nx\n", 2},
		{"0\n2\nt 0 5\n", 3},
		{"0\n1\nt 0 5\nt 1 6\n", 4},
		{"0\n1\nt zero 5\n", 3},
		{"0\n1\nt 0 5x\n", 3},
		{"0\n1\nt 0\n", 3},
		{"0\n2\nt 0 1\n\n", 4},
		{"0\n1\nt -1 1\n", 3},
	}
	for _, c := range cases {
		fs := newFS(t)
		put(t, fs, "/d/cp", c.text)
		_, err := ReadOffsets(fs, "/d/cp")
		var pe *record.CorruptionError
		if !errors.As(err, &pe) || !errors.Is(err, record.ErrCorruption) || pe.File != "/d/cp" || pe.Line != c.line {
			t.Errorf("%q: %v, want a parse error at line %d", c.text, err, c.line)
		}
		if err != nil && !strings.Contains(err.Error(), "/d/cp") {
			t.Errorf("error does not name the file: %v", err)
		}
	}
}

func TestLeaderEpochs(t *testing.T) {
	fs := newFS(t)
	if err := WriteLeaderEpochs(fs, "/d/"+kafkaname.LeaderEpochFile, []EpochEntry{{0, 0}}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, fs, "/d/"+kafkaname.LeaderEpochFile); got != "0\n1\n0 0\n" {
		t.Fatalf("bytes %q", got)
	}
	put(t, fs, "/d/le", "0\n2\n0 0\n3 150\n")
	es, err := ReadLeaderEpochs(fs, "/d/le")
	if err != nil || len(es) != 2 || es[1] != (EpochEntry{3, 150}) {
		t.Fatalf("%v %v", es, err)
	}
	put(t, fs, "/d/le", "0\n1\n0 0 0\n")
	if _, err := ReadLeaderEpochs(fs, "/d/le"); !errors.Is(err, record.ErrCorruption) {
		t.Fatalf("three fields: %v", err)
	}
	put(t, fs, "/d/le", "0\n1\n9999999999 0\n")
	if _, err := ReadLeaderEpochs(fs, "/d/le"); !errors.Is(err, record.ErrCorruption) {
		t.Fatalf("epoch beyond int32: %v", err)
	}
}

func TestPartitionMetadata(t *testing.T) {
	fs := newFS(t)
	id := UUID{0x8e, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7, 0xf8}
	if err := WritePartitionMetadata(fs, "/d/"+kafkaname.PartitionMetadataFile, id); err != nil {
		t.Fatal(err)
	}
	want := "version: 0\ntopic_id: jhorPE1eb3CBkqO0xdbn-A"
	if got := get(t, fs, "/d/"+kafkaname.PartitionMetadataFile); got != want {
		t.Fatalf("bytes %q, want %q", got, want)
	}
	back, err := ReadPartitionMetadata(fs, "/d/"+kafkaname.PartitionMetadataFile)
	if err != nil || back != id {
		t.Fatalf("read back %v %v", back, err)
	}
	if err := WritePartitionMetadata(fs, "/d/z", [16]byte{}); err == nil {
		t.Fatal("zero topic id written")
	}
	for _, text := range []string{
		"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
		"version: 1\ntopic_id: jhorPE1eb3CBkqO0xdbn-A",
		"version: 0\ntopic: jhorPE1eb3CBkqO0xdbn-A",
		"version: 0\ntopic_id: jhorPE1eb3CBkqO0xdbn",
		"version: 0",
	} {
		put(t, fs, "/d/pm", text)
		if _, err := ReadPartitionMetadata(fs, "/d/pm"); !errors.Is(err, record.ErrCorruption) {
			t.Errorf("%q accepted: %v", text, err)
		}
	}
	put(t, fs, "/d/pm", "version: 0\ntopic_id: jhorPE1eb3CBkqO0xdbn-A\n") // a trailing newline is tolerated
	if _, err := ReadPartitionMetadata(fs, "/d/pm"); err != nil {
		t.Fatal(err)
	}
}

func TestMetaProperties(t *testing.T) {
	fs := newFS(t)
	now := time.Date(2026, 11, 30, 1, 7, 58, 0, time.UTC)
	m := map[string]string{"version": "1", "node.id": "1", "cluster.id": "MkU3OEVBNTcwNTJENDM2Qg", "directory.id": "jhorPE1eb3CBkqO0xdbn-A"}
	if err := WriteMetaPropertiesAt(fs, "/d/"+kafkaname.MetaPropertiesFile, m, now); err != nil {
		t.Fatal(err)
	}
	want := "#\n#Mon Nov 30 01:07:58 UTC 2026\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\ndirectory.id=jhorPE1eb3CBkqO0xdbn-A\nnode.id=1\nversion=1\n"
	if got := get(t, fs, "/d/"+kafkaname.MetaPropertiesFile); got != want {
		t.Fatalf("bytes %q, want %q", got, want)
	}
	back, err := ReadMetaProperties(fs, "/d/"+kafkaname.MetaPropertiesFile)
	if err != nil || len(back) != 4 || back["cluster.id"] != m["cluster.id"] {
		t.Fatalf("%v %v", back, err)
	}
	if _, err := ReadMetaProperties(fs, "/d/none"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestPropertiesEscapes(t *testing.T) {
	m := map[string]string{"a b": "x=y:z", "k": " lead\ttab\\ é", "e": ""}
	text := FormatMetaProperties(m, time.Unix(0, 0))
	if !bytes.Contains(text, []byte(`a\ b=x\=y\:z`)) || !bytes.Contains(text, []byte(`k=\ lead\ttab\\ \u00E9`)) {
		t.Fatalf("escapes: %s", text)
	}
	back, err := ParseProperties("p", text)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		if back[k] != v {
			t.Fatalf("%q = %q, want %q", k, back[k], v)
		}
	}
	java := "# comment\n! other\n  key1 = v1\nkey2:v2\nkey3 v3\nkey4=multi\\\n    line\nemoji=\\uD83D\\uDE00\n"
	p, err := ParseProperties("p", []byte(java))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"key1": "v1", "key2": "v2", "key3": "v3", "key4": "multiline", "emoji": "😀"}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	if _, err := ParseProperties("p", []byte("k=\\u12\n")); !errors.Is(err, record.ErrCorruption) {
		t.Fatalf("short escape: %v", err)
	}
}

func TestCleanShutdown(t *testing.T) {
	fs := newFS(t)
	path := "/d/" + kafkaname.CleanShutdownFile
	if ok, err := HasCleanShutdown(fs, path); ok || err != nil {
		t.Fatalf("before: %v %v", ok, err)
	}
	if err := WriteCleanShutdown(fs, path); err != nil {
		t.Fatal(err)
	}
	if got := get(t, fs.Crash(), path); got != `{"version":0,"brokerEpoch":-1}` {
		t.Fatalf("bytes %q", got)
	}
	if err := WriteCleanShutdownEpoch(fs, path, 42); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := ReadCleanShutdown(fs, path); e != 42 || !ok || err != nil {
		t.Fatalf("read: %d %v %v", e, ok, err)
	}
	if err := RemoveCleanShutdown(fs, path); err != nil {
		t.Fatal(err)
	}
	if ok, _ := HasCleanShutdown(fs.Crash(), path); ok {
		t.Fatal("removal not durable")
	}
	if err := RemoveCleanShutdown(fs, path); err != nil {
		t.Fatalf("removing a missing marker: %v", err)
	}
}

type zeroReader struct{ n int }

func (z *zeroReader) Read(p []byte) (int, error) {
	z.n++
	if z.n <= 2 {
		clear(p) // zero UUID twice: must be skipped
		return len(p), nil
	}
	for i := range p {
		p[i] = byte(z.n + i)
	}
	return len(p), nil
}

func TestRandomUUID(t *testing.T) {
	u, err := RandomUUID(&zeroReader{})
	if err != nil || u.IsZero() || u[6]>>4 != 4 || u[8]>>6 != 2 || strings.HasPrefix(u.String(), "-") {
		t.Fatalf("%v %v", u, err)
	}
	back, err := ParseUUID(u.String())
	if err != nil || back != u {
		t.Fatalf("round trip %v %v", back, err)
	}
}
