package logstore

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partfs/partfs/vfs"
)

// readCounter counts reads of .log files and of index files.
type readCounter struct{ n, idx atomic.Int64 }

func (r *readCounter) MaybeFail(op vfs.Op, name string) (bool, error) {
	if op == vfs.OpRead && strings.HasSuffix(name, ".log") {
		r.n.Add(1)
	}
	if op == vfs.OpRead && (strings.HasSuffix(name, ".index") || strings.HasSuffix(name, ".timeindex")) {
		r.idx.Add(1)
	}
	return false, nil
}

func TestCleanOpenReadsNoSegmentData(t *testing.T) {
	mem, c := vfs.NewCrashFS(), newClock()
	cfg := map[string]string{"segment.bytes": "2000", "segment.index.bytes": "4096", "index.interval.bytes": "300"}
	st := openTopics(t, "/data", testOptions(mem, c, cfg))
	for p := 0; p < 20; p++ {
		name := fmt.Sprintf("topic%d", p)
		st.CreateTopic(name)
		l, _ := st.Log(name, 0)
		for i := 0; i < 30; i++ {
			if _, err := l.Append(recs(2, "v", 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]int64{}
	for _, l := range st.Logs() {
		want[l.Topic()] = l.EndOffset()
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, clean := range []bool{true, false} {
		if !clean {
			mem.Remove("/data/.kafka_cleanshutdown")
		}
		var reads readCounter
		st := openTopics(t, "/data", testOptions(vfs.NewErrorFS(mem, &reads), c, cfg))
		openReads, indexReads := reads.n.Load(), reads.idx.Load()
		segments := 0
		for _, l := range st.Logs() {
			segments += l.Stats().Segments
		}
		for _, l := range st.Logs() {
			if l.EndOffset() != want[l.Topic()] {
				t.Fatalf("%s: end %d, want %d", l.Topic(), l.EndOffset(), want[l.Topic()])
			}
			if s := l.Stats(); s.Records != want[l.Topic()] && clean {
				t.Fatalf("%s: records %d", l.Topic(), s.Records)
			}
		}
		if clean && openReads > int64(segments) {
			t.Fatalf("clean open read segment data %d times for %d segments: more than each last batch's header", openReads, segments)
		}
		if clean && indexReads > int64(2*segments) {
			t.Fatalf("clean open made %d index reads for %d segments: more than the last entries", indexReads, segments)
		}
		if !clean && openReads == 0 {
			t.Fatal("unclean open read nothing")
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSecondOpenFails(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = Open(dir, Options{NoBackground: true})
	if err == nil {
		t.Fatal("second open succeeded")
	}
	t.Log(err)
	if _, err := Open(dir, Options{NoBackground: true, ReadOnly: true}); err == nil {
		t.Fatal("read-only open of a directory in use succeeded")
	}
}
