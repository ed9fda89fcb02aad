package systest

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
)

// The derived-file fault table: every file partfs derives from the
// segments (the stored topic configuration, the segments sidecar, the
// root checkpoints, the clean-shutdown marker, the partition's epoch and
// metadata files, the offset and time indexes) is damaged in each way a
// disk, an operator or an attacker damages a file, on a data directory two
// clean stops old; the mount then serves every acknowledged record at its
// offset or, where it cannot trust the topic's settings, none (EIO),
// appends after them, is SIGKILLed, and serves them all again.

// derivedFile is one derived file of topic d's data directory; path is
// relative to it ("" parts are resolved from the segments on disk).
type derivedFile struct {
	name string
	path func(dir string) string
	json bool
}

func derivedFiles() []derivedFile {
	root := func(name string) func(string) string { return func(string) string { return name } }
	seg := func(which int, suffix string) func(string) string {
		return func(dir string) string {
			logs, _ := filepath.Glob(filepath.Join(dir, "d-0", "*.log"))
			sort.Strings(logs)
			if len(logs) == 0 {
				return "d-0/missing" + suffix
			}
			i := (which + len(logs)) % len(logs)
			return filepath.Join("d-0", strings.TrimSuffix(filepath.Base(logs[i]), ".log")+suffix)
		}
	}
	return []derivedFile{
		{"topics", root("partfs-topics.json"), true},
		{"sidecar", root("d-0/logstore-segments.partfs"), true},
		{"marker", root(".kafka_cleanshutdown"), false},
		{"recovery point", root("recovery-point-offset-checkpoint"), false},
		{"log start", root("log-start-offset-checkpoint"), false},
		{"replication", root("replication-offset-checkpoint"), false},
		{"leader epochs", root("d-0/leader-epoch-checkpoint"), false},
		{"partition metadata", root("d-0/partition.metadata"), false},
		{"active index", seg(-1, ".index"), false},
		{"active time index", seg(-1, ".timeindex"), false},
		{"sealed index", seg(0, ".index"), false},
		{"sealed time index", seg(0, ".timeindex"), false},
	}
}

var damageKinds = []string{"missing", "empty", "cut short", "bit flipped", "older copy", "shifted values", "wrong JSON type"}

// damage applies kind to the file at path; older is the file as the first
// clean stop left it (nil: it did not exist then).
func damage(t *testing.T, path, kind string, older []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && kind != "older copy" {
		t.Skipf("%s: %v", path, err)
	}
	switch kind {
	case "missing":
		err = os.Remove(path)
	case "empty":
		err = os.WriteFile(path, nil, 0o644)
	case "cut short":
		err = os.WriteFile(path, b[:len(b)/2], 0o644)
	case "bit flipped":
		if len(b) == 0 {
			b = []byte{0}
		}
		b[len(b)/2] ^= 0x04
		err = os.WriteFile(path, b, 0o644)
	case "older copy":
		if older == nil {
			err = os.Remove(path)
		} else {
			err = os.WriteFile(path, older, 0o644)
		}
	case "shifted values":
		err = os.WriteFile(path, shifted(t, path, b), 0o644)
	case "wrong JSON type":
		err = os.WriteFile(path, []byte(`{"version":"2","topics":[1],"crc32c":"x","body":{"log_start":"0","segments":{}}}`), 0o644)
	}
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

var number = regexp.MustCompile(`-?[0-9]+`)

// shifted moves the file's values by 10 where a checksum does not see it
// (the segments sidecar's checksum is recomputed; a binary index gets every
// relative offset one higher).
func shifted(t *testing.T, path string, b []byte) []byte {
	t.Helper()
	switch {
	case strings.HasSuffix(path, ".index") || strings.HasSuffix(path, ".timeindex"):
		entry, at := 8, 0
		if strings.HasSuffix(path, ".timeindex") {
			entry, at = 12, 8
		}
		for i := 0; i+entry <= len(b); i += entry {
			b[i+at+3]++
		}
		return b
	case strings.HasSuffix(path, "logstore-segments.partfs"):
		var doc struct {
			Version int             `json:"version"`
			CRC     uint32          `json:"crc32c"`
			Body    json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		doc.Body = []byte(strings.ReplaceAll(string(doc.Body), `"next":`, `"next":-10+`))
		doc.Body = []byte(regexp.MustCompile(`-10\+([0-9]+)`).ReplaceAllStringFunc(string(doc.Body), func(s string) string {
			n, _ := strconv.ParseInt(s[4:], 10, 64)
			return strconv.FormatInt(n-10, 10)
		}))
		doc.CRC = crc32.Checksum(doc.Body, crc32.MakeTable(crc32.Castagnoli))
		out, _ := json.Marshal(doc)
		return out
	}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if f := strings.Fields(line); len(f) == 3 {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			lines[i] = f[0] + " " + f[1] + " " + strconv.FormatInt(n+10, 10)
		}
	}
	if !strings.Contains(string(b), "\n") || len(lines) < 3 { // not a checkpoint: shift its numbers
		return number.ReplaceAllFunc(b, func(s []byte) []byte {
			n, _ := strconv.ParseInt(string(s), 10, 64)
			return []byte(strconv.FormatInt(n+10, 10))
		})
	}
	return []byte(strings.Join(lines, "\n"))
}

// derivedBase builds the table's data directory: topic d with small
// segments and retention.ms=-1, 60 records before a clean stop (whose
// derived files are the older copies) and 60 after it, stopped cleanly.
func derivedBase(t *testing.T, dir string) (older map[string][]byte, want []string) {
	t.Helper()
	d := startDaemon(t, dir, dir+".mnt")
	mkTopic(t, d, "d", 1, "segment.bytes=2048", "index.interval.bytes=256", "retention.ms=-1")
	for i := 0; i < 60; i++ {
		want = append(want, fmt.Sprintf("a%02d-%s", i, strings.Repeat("x", 20)))
		appendLine(t, d.path("d", "0", "log"), want[len(want)-1])
	}
	d.stop()
	older = map[string][]byte{}
	for _, f := range derivedFiles() {
		if b, err := os.ReadFile(filepath.Join(dir, f.path(dir))); err == nil {
			older[f.name] = b
		}
	}
	d.restart()
	for i := 0; i < 60; i++ {
		want = append(want, fmt.Sprintf("b%02d-%s", i, strings.Repeat("x", 20)))
		appendLine(t, d.path("d", "0", "log"), want[len(want)-1])
	}
	d.stop()
	return older, want
}

// servedOrClosed checks what the mount serves of d/0: every record of want
// at its offset, nothing else; or, when closed is allowed, EIO.
func servedOrClosed(t *testing.T, d *daemon, want []string, closedOK bool) (open bool) {
	t.Helper()
	raw, err := os.ReadFile(d.path("d", "0", "log.jsonl"))
	if err != nil {
		if closedOK && testutil.Errno(err) == syscall.EIO {
			return false
		}
		t.Fatalf("read d/0/log.jsonl: %v", err)
	}
	got, err := parseJSONL(raw)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if i >= len(got) {
			t.Fatalf("served %d records, want %d: the first missing is %q", len(got), len(want), w)
		}
		if got[i].Offset != int64(i) || got[i].Value == nil || *got[i].Value != w {
			t.Fatalf("record %d: offset %d value %v, want %q", i, got[i].Offset, got[i].Value, w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("served %d records, want %d", len(got), len(want))
	}
	return true
}

// foundLines returns the daemon's log lines naming the file or its kind.
func foundLines(d *daemon, f derivedFile, path string) []string {
	var out []string
	for _, line := range strings.Split(d.log.String(), "\n") {
		if strings.Contains(line, filepath.Base(path)) || strings.Contains(line, "sidecar") && f.name == "sidecar" ||
			strings.Contains(line, "topic configuration") && f.name == "topics" || strings.Contains(line, "recover") {
			out = append(out, line)
		}
	}
	return out
}

// TestDerivedFileFaults: the table (all of it with PARTFS_SYSTEST_LONG;
// otherwise every row of the sidecar and the stored configuration and one
// damage kind per other file, in rotation).
func TestDerivedFileFaults(t *testing.T) {
	testutil.NeedFUSE(t)
	top := t.TempDir()
	base := filepath.Join(top, "base")
	older, want := derivedBase(t, base)
	for fi, f := range derivedFiles() {
		for ki, kind := range damageKinds {
			if kind == "wrong JSON type" && !f.json {
				continue
			}
			if !long() && f.name != "sidecar" && f.name != "topics" && (fi+ki)%len(damageKinds) != 0 {
				continue
			}
			t.Run(f.name+"/"+kind, func(t *testing.T) {
				dir := filepath.Join(top, fmt.Sprintf("row%d-%d", fi, ki))
				run(t, "cp", "-a", base, dir)
				rel := f.path(dir)
				damage(t, filepath.Join(dir, rel), kind, older[f.name])
				d := startDaemon(t, dir, dir+".mnt")
				closedOK := f.name == "topics"
				rows := append([]string(nil), want...)
				if servedOrClosed(t, d, rows, closedOK) {
					for i := 0; i < 10; i++ {
						rows = append(rows, fmt.Sprintf("c%02d", i))
						if err := tryAppend(d.path("d", "0", "log"), rows[len(rows)-1]); err != nil {
							t.Fatalf("append: %v\n%s", err, tail(d.log.String(), 3000))
						}
					}
					servedOrClosed(t, d, rows, false)
				}
				t.Logf("%s %s: partfs logged %q", rel, kind, foundLines(d, f, rel))
				d.kill9()
				d.restart()
				servedOrClosed(t, d, rows, closedOK)
				d.stop()
			})
		}
	}
}

func tryAppend(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

// TestDerivedScenarios: the scenarios around derived files with
// SIGKILLs: a stored setting of a topic whose directory was away survives
// a config write to another topic (retention.ms=-1 keeps its 2020
// records), and a clean-shutdown marker put back after a SIGKILL opens
// the directory without losing or misnumbering a record.
func TestDerivedScenarios(t *testing.T) {
	d := startFresh(t, cleanerFlags...)
	mkTopic(t, d, "old", 1, "retention.ms=-1")
	mkTopic(t, d, "d", 1)
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf(`{"value":"o%d","timestamp":1600000000000}`, i))
	}
	if err := tryAppend(d.path("old", "0", "log.jsonl"), strings.Join(lines, "\n")); err != nil {
		t.Fatal(err)
	}
	d.kill9()
	away := filepath.Join(filepath.Dir(d.data), "old-0.away")
	if err := os.Rename(filepath.Join(d.data, "old-0"), away); err != nil {
		t.Fatal(err)
	}
	d.restart()
	if err := os.WriteFile(d.path("d", "config"), []byte("segment.bytes=4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 0; i < 20; i++ {
		want = append(want, fmt.Sprintf("r%02d", i))
		appendLine(t, d.path("d", "0", "log"), want[i])
	}
	d.kill9()
	if err := os.Rename(away, filepath.Join(d.data, "old-0")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.data, ".kafka_cleanshutdown"), nil, 0o644); err != nil {
		t.Fatal(err) // a marker the SIGKILL did not leave
	}
	d.restart()
	defer d.stop()
	time.Sleep(time.Second) // retention looks every 100 ms
	if offs, err := jsonlOffsets(d, "old", "0"); err != nil || len(offs) != 30 {
		t.Fatalf("old/0 after its directory came back: %d records %v\n%s", len(offs), err, tail(d.log.String(), 2000))
	}
	servedOrClosed(t, d, want, false)
	want = append(want, "after")
	appendLine(t, d.path("d", "0", "log"), "after")
	servedOrClosed(t, d, want, false)
}

// TestDerivedTopicsFileLost: partfs-topics.json put back as an older copy,
// then missing: topic old (retention.ms=-1, records from 2020) keeps its
// 30 records through retention passes, with a log line naming it; writing
// its configuration again lifts the guard.
func TestDerivedTopicsFileLost(t *testing.T) {
	d := startFresh(t, cleanerFlags...)
	mkTopic(t, d, "old", 1, "retention.bytes=-1")
	topics := filepath.Join(d.data, "partfs-topics.json")
	older, err := os.ReadFile(topics) // without retention.ms=-1
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.path("old", "config"), []byte("retention.ms=-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf(`{"value":"o%d","timestamp":1600000000000}`, i))
	}
	if err := tryAppend(d.path("old", "0", "log.jsonl"), strings.Join(lines, "\n")); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"older copy", "missing"} {
		d.stop()
		if step == "older copy" {
			err = os.WriteFile(topics, older, 0o644)
		} else {
			err = os.Remove(topics)
		}
		if err != nil {
			t.Fatal(err)
		}
		d.restart()
		time.Sleep(time.Second) // retention looks every 100 ms
		if offs, err := jsonlOffsets(d, "old", "0"); err != nil || len(offs) != 30 {
			t.Fatalf("%s: old/0 has %d records %v\n%s", step, len(offs), err, tail(d.log.String(), 2000))
		}
		if !strings.Contains(d.log.String(), "retention suspended") {
			t.Fatalf("%s: no log line about the suspended retention\n%s", step, tail(d.log.String(), 2000))
		}
	}
	if err := os.WriteFile(d.path("old", "config"), []byte("retention.ms=1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		offs, err := jsonlOffsets(d, "old", "0")
		if err == nil && len(offs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retention not applied after the configuration was written: %d records %v", len(offs), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.stop()
}
