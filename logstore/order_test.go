package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// orderLog is a closed one-segment log in dir of n batches of one record
// each, value "v<offset>" padded to pad bytes, and the position of every
// batch.
func orderLog(t *testing.T, n, pad int) (dir string, pos []int64) {
	dir = t.TempDir()
	st, l := openAt(t, dir, Options{NoBackground: true})
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("v%-*d", pad-1, i)
		if _, err := l.Append([]record.Record{{Timestamp: int64(i + 1), Value: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
		_, p, err := l.Locate(int64(i))
		if err != nil {
			t.Fatal(err)
		}
		pos = append(pos, p)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, pos
}

// setBase writes base as the base offset of the batch at pos of the
// segment with base offset seg in partition directory part.
func setBase(t *testing.T, part string, seg, pos, base int64) {
	mutate(t, vfs.Default, segmentPath(part, seg, kafkaname.LogSuffix), func(b []byte) []byte {
		binary.BigEndian.PutUint64(b[pos:], uint64(base))
		return b
	})
}

// TestReadChecksBaseOffsets damages the base offset of one batch, which
// no CRC covers, by one either way, on a clean mount, in a small segment
// (preads) and one read through mappings: a read from any offset serves
// only records under their own offsets, and one from the segment start,
// or from any offset up to the damaged batch's, fails with a corruption
// naming the file and the damaged batch's position; nothing is dropped
// silently.
func TestReadChecksBaseOffsets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n, pad int
	}{{"pread", 40, 8}, {"mapped", 1500, 1024}} {
		for _, delta := range []int64{+1, -1} {
			t.Run(fmt.Sprintf("%s/%+d", tc.name, delta), func(t *testing.T) {
				dir, pos := orderLog(t, tc.n, tc.pad)
				k := int64(tc.n / 2)
				setBase(t, dir+"/t-0", 0, pos[k], k+delta)
				st, l := openAt(t, dir, Options{NoBackground: true})
				defer st.Close()
				segs, release := l.Segments()
				defer release()
				if tc.name == "mapped" && segs[0].Size < mapMin {
					t.Fatalf("segment of %d bytes is not read through mappings", segs[0].Size)
				}
				for from := int64(0); from < int64(tc.n); from++ {
					if tc.name == "mapped" && from%7 != 0 && (from < k-2 || from > k+2) {
						continue
					}
					var got []int64
					err := l.Read(segs[0], from, func(r *record.Record) bool {
						if v := strings.TrimSpace(string(r.Value)); v != fmt.Sprintf("v%d", r.Offset) {
							t.Fatalf("from %d: offset %d serves %q", from, r.Offset, v)
						}
						got = append(got, r.Offset)
						return true
					})
					if from > k {
						if err == nil && (len(got) == 0 || got[0] != from) {
							t.Fatalf("from %d: first offset served %v", from, got)
						}
						continue
					}
					var ce *record.CorruptionError
					if !errors.As(err, &ce) || ce.Pos != pos[k] || !strings.HasSuffix(ce.File, "00000000000000000000.log") {
						t.Fatalf("from %d: err %v, want a corruption at position %d of the segment", from, err, pos[k])
					}
					if int64(len(got)) != max(k-from, 0) {
						t.Fatalf("from %d: %d records before the error, want %d", from, len(got), k-from)
					}
				}
			})
		}
	}
}

// misnameSegment writes 20 records to t-0 in dir in 300-byte segments,
// closes the store and renames the third segment's files one offset above
// its first batch; it returns that segment's true base.
func misnameSegment(t *testing.T, dir string) int64 {
	t.Helper()
	st, l := openAt(t, dir, Options{NoBackground: true, Defaults: map[string]string{"segment.bytes": "300"}})
	for i := 0; i < 20; i++ {
		if _, err := l.Append(recs(1, fmt.Sprint("v", i), 1)); err != nil {
			t.Fatal(err)
		}
	}
	segs, release := l.Segments()
	base := segs[2].Base
	release()
	st.Close()
	part := dir + "/t-0"
	for _, suf := range []string{kafkaname.LogSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix} {
		if err := vfs.Default.Rename(segmentPath(part, base, suf), segmentPath(part, base+1, suf)); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// TestReadChecksFirstBatchAgainstName gives a segment a file name above
// its first batch's offset: every read of it fails with a corruption at
// position 0, none serves the records after the first batch alone.
func TestReadChecksFirstBatchAgainstName(t *testing.T) {
	dir := t.TempDir()
	base := misnameSegment(t, dir)
	st, l := openAt(t, dir, Options{NoBackground: true})
	defer st.Close()
	segs, release := l.Segments()
	defer release()
	for _, seg := range segs {
		if seg.Base != base+1 {
			continue
		}
		for from := seg.Base; from < seg.Next; from++ {
			n := 0
			err := l.Read(seg, from, func(*record.Record) bool { n++; return true })
			var ce *record.CorruptionError
			if !errors.As(err, &ce) || ce.Pos != 0 || n != 0 {
				t.Fatalf("from %d: %d records, err %v; want a corruption at position 0 and none", from, n, err)
			}
		}
		return
	}
	t.Fatalf("no segment %d in %v", base+1, segs)
}

// TestRecoveryKeepsMisnamedSegment: a recovery that meets a segment whose
// first batch lies below its file name cuts nothing of it and leaves the
// partition unopened, where it used to truncate the whole segment.
func TestRecoveryKeepsMisnamedSegment(t *testing.T) {
	dir := t.TempDir()
	base := misnameSegment(t, dir)
	part := dir + "/t-0"
	seg := segmentPath(part, base+1, kafkaname.LogSuffix)
	size := fileSize(t, vfs.Default, seg)
	for _, f := range []string{kafkaname.CleanShutdownFile, kafkaname.RecoveryPointFile} {
		if err := vfs.Default.Remove(dir + "/" + f); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Open(dir, Options{NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Log("t", 0); !errors.Is(err, partlog.ErrCorrupt) {
		t.Fatalf("partition opened (%v), want it left unopened", err)
	}
	if got := fileSize(t, vfs.Default, seg); got != size {
		t.Fatalf("the misnamed segment was cut to %d bytes from %d", got, size)
	}
}
