package logstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

func writeFile(t *testing.T, fs vfs.FS, path, text string) {
	t.Helper()
	if err := vfs.WriteFileDurable(fs, path, []byte(text)); err != nil {
		t.Fatal(err)
	}
}

// TestTopicsFileKeepsEveryEntry: a config write to one topic keeps the
// entries of topics without a directory and of topics with a damaged entry.
func TestTopicsFileKeepsEveryEntry(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	fs.MkdirAll("/data", 0o755)
	writeFile(t, fs, "/data/"+TopicsFile, `{"version":1,"topics":{"away":{"retention.ms":"-1"},"num":{"retention.ms":1}}}`)
	st, _ := openTest(t, fs, c, nil)
	if err := st.SetTopicConfig("t", []partlog.KV{{Key: "retention.ms", Value: "5000"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	text := string(readFileBytes(t, fs, "/data/"+TopicsFile))
	for _, want := range []string{`"away": {`, `"retention.ms": "-1"`, `"num": {`, `"retention.ms": 1`, `"t": {`, `"retention.ms": "5000"`} {
		if !strings.Contains(text, want) {
			t.Fatalf("rewritten file lacks %s:\n%s", want, text)
		}
	}
	fs.MkdirAll("/data/away-0", 0o755)
	st, _ = openTest(t, fs, c, nil)
	defer st.Close()
	if got := configValue(t, st, "away", "retention.ms"); got != "-1" {
		t.Fatalf("away's retention.ms %q after its directory came back", got)
	}
	if got := configValue(t, st, "t", "retention.ms"); got != "5000" {
		t.Fatalf("t's retention.ms %q", got)
	}
}

// TestTopicsFileBadEntryClosesOnlyItsTopic: a value of any JSON type other
// than a string, or an entry failing its checksum, leaves that topic
// unopened (EIO) while the others open; an unparseable file opens none.
func TestTopicsFileBadEntryClosesOnlyItsTopic(t *testing.T) {
	for _, tc := range []struct{ name, entry, sum string }{
		{"number", `{"retention.ms":1}`, ""},
		{"bool", `{"retention.ms":true}`, ""},
		{"null", `{"retention.ms":null}`, ""},
		{"array", `["retention.ms"]`, ""},
		{"object", `{"retention.ms":{"a":"b"}}`, ""},
		{"checksum", `{"retention.ms":"1"}`, `,"checksums":{"bad":"123"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, c := vfs.NewCrashFS(), newClock()
			fs.MkdirAll("/data/bad-0", 0o755)
			fs.MkdirAll("/data/good-0", 0o755)
			version := "1"
			if tc.sum != "" {
				version = "2"
			}
			writeFile(t, fs, "/data/"+TopicsFile, `{"version":`+version+`,"topics":{"bad":`+tc.entry+`}`+tc.sum+`}`)
			st, _ := openTest(t, fs, c, nil)
			defer st.Close()
			if _, err := st.Log("bad", 0); !errors.Is(err, partlog.ErrCorrupt) {
				t.Fatalf("bad-0: %v, want ErrCorrupt", err)
			}
			if _, err := st.Log("good", 0); err != nil {
				t.Fatalf("good-0: %v", err)
			}
			if err := st.SetTopicConfig("bad", []partlog.KV{{Key: "retention.ms", Value: "1"}}); !errors.Is(err, partlog.ErrCorrupt) {
				t.Fatalf("config write to the damaged topic: %v", err)
			}
		})
	}
	fs, c := vfs.NewCrashFS(), newClock()
	fs.MkdirAll("/data/t-0", 0o755)
	writeFile(t, fs, "/data/"+TopicsFile, `{"version":1,"topics":{"t":{"retention.ms":"-1"}`)
	st := openTopics(t, "/data", testOptions(fs, c, nil))
	defer st.Close()
	if _, err := st.Log("t", 0); !errors.Is(err, partlog.ErrCorrupt) {
		t.Fatalf("t-0 with an unparseable topics file: %v", err)
	}
	if err := st.CreateTopic("u"); !errors.Is(err, partlog.ErrCorrupt) {
		t.Fatalf("new topic with an unparseable topics file: %v", err)
	}
}

// TestMetadataTopicNotCreated: the KRaft metadata log is never made.
func TestMetadataTopicNotCreated(t *testing.T) {
	st, _ := openTest(t, vfs.NewCrashFS(), newClock(), nil)
	defer st.Close()
	if err := st.CreateTopic(metadataTopic); !errors.Is(err, partlog.ErrReadOnly) {
		t.Fatalf("create %s: %v", metadataTopic, err)
	}
}
