package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// placed is one record's rendering at its position in a stream.
type placed struct {
	pos  int64
	text []byte
}

// streamImage is what a stream holds: its records' renderings at their
// positions (gaps between them), and its size.
type streamImage struct {
	recs []placed
	size int64
}

// at is what a read of n bytes at pos returns: the rest of the record
// covering pos (the next record's start in a gap), then the records after
// it, without the gaps.
func (im *streamImage) at(pos int64, n int) []byte {
	i := sort.Search(len(im.recs), func(i int) bool {
		r := im.recs[i]
		return r.pos+int64(len(r.text)) > pos
	})
	var out []byte
	for ; i < len(im.recs) && len(out) < n; i++ {
		r := im.recs[i]
		out = append(out, r.text[max(pos-r.pos, 0):]...)
	}
	return out[:min(n, len(out))]
}

// checkStream reads path at every position and compares with im; st_size
// and cat too.
func checkStream(t *testing.T, path string, im *streamImage) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != im.size {
		t.Errorf("%s: st_size %d, want %d", path, fi.Size(), im.size)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := im.at(0, int(im.size)); !bytes.Equal(whole, want) {
		t.Errorf("%s: cat gives %d bytes, want %d:\n%s\nwant:\n%s", path, len(whole), len(want), whole, want)
	}
	buf := make([]byte, 97)
	bad := 0

	var at []int64 // every record's first and last byte, and every 13th
	for _, r := range im.recs {
		at = append(at, r.pos, r.pos+int64(len(r.text))-1)
	}
	for pos := int64(0); pos < im.size; pos += 13 {
		at = append(at, pos)
	}
	for _, pos := range at {
		if bad == 5 {
			break
		}
		n, err := f.ReadAt(buf, pos)
		if want := im.at(pos, len(buf)); !bytes.Equal(buf[:n], want) {
			t.Errorf("%s: pread at %d = %q (%v), want %q", path, pos, buf[:n], err, want)
			bad++
		}
	}
}

// renderings is each record's rendering in log.jsonl and log, by offset.
type renderings map[int64][2][]byte

// readRenderings reads log.jsonl of t/0 line by line.
func readRenderings(t *testing.T, e *env) renderings {
	b, err := os.ReadFile(e.Path("t/0/log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := renderings{}
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r jsonRec
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		var plain []byte
		if r.Value != nil {
			plain = []byte(*r.Value + "\n")
		}
		out[r.Offset] = [2][]byte{line, plain}
	}
	return out
}

// images lays out the records of segs as the streams hold them: each
// segment's records close up from start[base].
func images(t *testing.T, l partlog.Log, segs []partlog.Segment, start map[int64][2]int64, rend renderings) [2]*streamImage {
	var ims [2]*streamImage
	for k := range ims {
		ims[k] = &streamImage{}
	}
	for _, s := range segs {
		st, ok := start[s.Base]
		if !ok {
			t.Fatalf("segment %d had no range before", s.Base)
		}
		pos := st
		err := l.Read(s, s.Base, func(r *record.Record) bool {
			for k, im := range ims {
				txt, ok := rend[r.Offset]
				if !ok {
					t.Fatalf("offset %d was not read before", r.Offset)
				}
				im.recs = append(im.recs, placed{pos: pos[k], text: txt[k]})
				pos[k] += int64(len(txt[k]))
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, im := range ims {
			im.size = pos[k]
		}
	}
	return ims
}

// starts is where each segment's range begins in the two streams: the
// renderings of all records before its base that the partition ever held
// (rend holds each record as read before it was cleaned away).
func starts(segs []partlog.Segment, rend renderings) map[int64][2]int64 {
	out := map[int64][2]int64{}
	for _, s := range segs {
		var st [2]int64
		for off, txt := range rend {
			if off < s.Base {
				st[0] += int64(len(txt[0]))
				st[1] += int64(len(txt[1]))
			}
		}
		out[s.Base] = st
	}
	return out
}

// reopenOpt makes segments long enough that their renderings have
// position checkpoints inside.
var reopenOpt = mountOpt{defaults: map[string]string{"cleanup.policy": "compact", "segment.bytes": "50000",
	"file.delete.delay.ms": "0"}}

// TestRemountAfterOfflineCompaction: a compacted partition is cleaned,
// appended to and read (so the positions of its small cleaned segments
// are kept), unmounted, cleaned again offline, which merges segments into one larger
// than the first of them was, and mounted again. Every
// read at every position of log.jsonl and log gives the records that are
// left, closed up inside their segment's range; st_size and cat agree.
func TestRemountAfterOfflineCompaction(t *testing.T) {
	data := t.TempDir()
	c := &compactedEnv{env: mountAt(t, data, reopenOpt)}
	c.Sh("mkdir t")
	early := func(v string) {
		if err := c.AppendOnce("t/0/log.jsonl", fmt.Sprintf("{\"key\":\"e0\",\"value\":%q}\n{\"key\":\"e1\",\"value\":%q}\n", v, v)); err != nil {
			t.Fatal(err)
		}
	}
	early("first") // kept in the first segment by the first cleaning
	appendKeyed(c.env, 7, 1200)
	rend := readRenderings(t, c.env)
	l, err := c.st.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	c.clean()
	appendKeyed(c.env, 8, 1200) // the dirty part the second cleaning cleans
	early("second")             // which removes the first segment's records
	for off, txt := range readRenderings(t, c.env) {
		rend[off] = txt
	}
	c.Sh("cat t/0/log >/dev/null")
	before, release := l.Segments()
	release()
	start := starts(before, rend)
	c.Unmount()

	st, err := logstore.Open(data, logstore.Options{Logger: testutil.NewLogger().Entry, Defaults: reopenOpt.defaults, NoBackground: true, OpenInBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := compact.NewCleaner(compact.Options{DedupeBufferSize: 1 << 16}).CleanAll(compact.Targets(st), true)
	if err != nil || sum.RecordsRemoved == 0 {
		t.Fatalf("clean: %v %+v", err, sum)
	}
	l, err = st.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	after, release := l.Segments()
	grew := false
	for _, s := range after {
		for _, o := range before {
			grew = grew || (s.Base == o.Base && s.Next > o.Next && s.Size >= o.Size)
		}
	}
	if !grew {
		t.Fatalf("no segment came out of cleaning with a larger Next and Size: %+v -> %+v", before, after)
	}
	t.Logf("segments before the offline cleaning %+v, after %+v", before, after)
	ims := images(t, l, after, start, rend)
	release()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	r := mountAt(t, data, reopenOpt)
	checkStream(t, r.Path("t/0/log.jsonl"), ims[0])
	checkStream(t, r.Path("t/0/log"), ims[1])
}
