package logstore

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/vfs"
)

// rewriteSidecar changes the segments sidecar's entries with edit and
// stores them with a matching checksum (damage the checksum cannot see).
func rewriteSidecar(t *testing.T, fs vfs.FS, edit func([]sidecarSegment)) {
	t.Helper()
	path := "/data/t-0/" + segmentsSidecarName + sidecarSuffix
	var doc segmentsSidecar
	if err := json.Unmarshal([]byte(string(readFileBytes(t, fs, path))), &doc); err != nil {
		t.Fatal(err)
	}
	var body sidecarBody
	if err := json.Unmarshal(doc.Body, &body); err != nil {
		t.Fatal(err)
	}
	edit(body.Segments)
	doc.Body, _ = json.Marshal(body)
	doc.CRC = crc32.Checksum(doc.Body, topicsCRC)
	b, _ := json.Marshal(doc)
	writeFile(t, fs, path, string(b))
}

// TestSidecarCheckedAgainstSegments: an entry whose next offset, size,
// last batch position, record count or timestamps disagree with its
// segment is ignored; appends after it get offsets past every stored
// record and a reader sees every record, across another clean and an
// unclean reopen.
func TestSidecarCheckedAgainstSegments(t *testing.T) {
	edits := map[string]func([]sidecarSegment){
		"active next 10 below":  func(l []sidecarSegment) { l[len(l)-1].Next -= 10 },
		"active next 10 above":  func(l []sidecarSegment) { l[len(l)-1].Next += 10 },
		"sealed next 78 below":  func(l []sidecarSegment) { l[0].Next -= 78 },
		"sealed next above":     func(l []sidecarSegment) { l[0].Next = l[1].Base + 5 },
		"last position shifted": func(l []sidecarSegment) { l[len(l)-1].LastPos -= 3 },
		"records over offsets":  func(l []sidecarSegment) { l[0].Records = l[0].Next - l[0].Base + 1 },
		"max timestamp low":     func(l []sidecarSegment) { l[len(l)-1].MaxTs = 0 },
		"all bases shifted": func(l []sidecarSegment) {
			for i := range l {
				l[i].Base += 1
			}
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			fs, c := vfs.NewCrashFS(), newClock()
			st, l := openTest(t, fs, c, map[string]string{"segment.bytes": "600"})
			for i := 0; i < 10; i++ {
				if _, err := l.Append(recs(10, fmt.Sprint(i), 1000)); err != nil {
					t.Fatal(err)
				}
			}
			if l.Stats().Segments < 2 {
				t.Fatalf("%d segments, want several", l.Stats().Segments)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			rewriteSidecar(t, fs, edit)
			st, l = openTest(t, fs, c, map[string]string{"segment.bytes": "600"})
			if l.EndOffset() != 100 || l.Stats().Records != 100 {
				t.Fatalf("end %d, records %d, want 100", l.EndOffset(), l.Stats().Records)
			}
			if got, err := l.Append(recs(2, "new", 2000)); err != nil || got != 100 {
				t.Fatalf("append at %d %v, want offset 100", got, err)
			}
			if n := len(readLog(t, l, 0)); n != 102 {
				t.Fatalf("read %d records, want 102", n)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st, l = openTest(t, fs, c, map[string]string{"segment.bytes": "600"})
			if n := len(readLog(t, l, 0)); n != 102 || l.EndOffset() != 102 {
				t.Fatalf("after a clean reopen: read %d records, end %d", n, l.EndOffset())
			}
			st.Close()
		})
	}
}

// TestSidecarDamagedFile: a sidecar missing, empty, cut short, with a bit
// flipped, of the older format or of the wrong JSON type is ignored.
func TestSidecarDamagedFile(t *testing.T) {
	path := "/data/t-0/" + segmentsSidecarName + sidecarSuffix
	damage := map[string]func(string) string{
		"empty":       func(string) string { return "" },
		"cut short":   func(s string) string { return s[:len(s)/2] },
		"bit flipped": func(s string) string { b := []byte(s); b[len(b)/2] ^= 0x08; return string(b) },
		"older format": func(s string) string {
			return `[{"base":0,"size":1,"next":3,"records":3,"max_ts":1,"off_max_ts":0}]`
		},
		"wrong JSON type": func(string) string { return `{"version":"2","crc32c":"x","segments":{}}` },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			fs, c := closedWith(t, recs(30, "a", 1000))
			writeFile(t, fs, path, f(string(readFileBytes(t, fs, path))))
			st, l := openTest(t, fs, c, nil)
			defer st.Close()
			if l.EndOffset() != 30 || l.Stats().Records != 30 {
				t.Fatalf("end %d records %d, want 30", l.EndOffset(), l.Stats().Records)
			}
			if got, err := l.Append(recs(1, "b", 2000)); err != nil || got != 30 {
				t.Fatalf("append at %d %v", got, err)
			}
		})
	}
}

// TestLogStartCheckpointAboveSidecar: a log-start checkpoint raised after
// a clean close (partfs itself never raises it past a segment base) is not
// trusted: the log start recorded in the sidecar is used, nothing deleted.
func TestLogStartCheckpointAboveSidecar(t *testing.T) {
	fs, c := closedWith(t, recs(30, "a", 1000))
	writeFile(t, fs, "/data/"+kafkaname.LogStartOffsetFile, "0\n1\nt 0 20\n")
	st, l := openTest(t, fs, c, nil)
	defer st.Close()
	if l.StartOffset() != 0 || len(readLog(t, l, 0)) != 30 {
		t.Fatalf("start %d, %d records", l.StartOffset(), len(readLog(t, l, 0)))
	}
}
