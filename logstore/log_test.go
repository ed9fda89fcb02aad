package logstore

import (
	"testing"

	"github.com/partfs/partfs/vfs"
)

func TestAppendReadReopen(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, l := openTest(t, fs, c, nil)
	first, err := l.Append(recs(3, "a", 0))
	if err != nil || first != 0 {
		t.Fatalf("append: first=%d err=%v", first, err)
	}
	first, err = l.Append(recs(2, "b", 1000))
	if err != nil || first != 3 {
		t.Fatalf("append: first=%d err=%v", first, err)
	}
	got := readLog(t, l, 0)
	want := []string{"a-0", "a-1", "a-2", "b-0", "b-1"}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.off != int64(i) || r.value != want[i] {
			t.Fatalf("record %d = %+v, want offset %d value %s", i, r, i, want[i])
		}
	}
	if got[0].ts != c.Now().UnixMilli() || got[3].ts != 1000 {
		t.Fatalf("timestamps %d %d", got[0].ts, got[3].ts)
	}
	if s := l.Stats(); s.Records != 5 || s.LogEndOffset != 5 || s.Segments != 1 {
		t.Fatalf("stats %+v", s)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists(fs, "/data/.kafka_cleanshutdown") {
		t.Fatal("no clean shutdown marker")
	}
	if n := fileSize(t, fs, "/data/t-0/00000000000000000000.index"); n != 0 {
		t.Fatalf("index not trimmed at close: %d bytes", n)
	}
	st, l = openTest(t, fs, c, nil)
	if exists(fs, "/data/.kafka_cleanshutdown") {
		t.Fatal("marker not removed at open")
	}
	if l.EndOffset() != 5 || len(readLog(t, l, 2)) != 3 {
		t.Fatalf("after reopen: end %d", l.EndOffset())
	}
	if s := l.Stats(); s.Records != 5 {
		t.Fatalf("records after clean reopen: %d", s.Records)
	}
	if n := fileSize(t, fs, "/data/t-0/00000000000000000000.index"); n != 0 {
		t.Fatalf("a clean open resized the active index: %d bytes", n)
	}
	if _, err := l.Append(recs(1, "c", 0)); err != nil {
		t.Fatal(err)
	}
	if n := fileSize(t, fs, "/data/t-0/00000000000000000000.index"); n != 10*1024*1024 {
		t.Fatalf("active index not preallocated at the first append: %d", n)
	}
	st.Close()
}
