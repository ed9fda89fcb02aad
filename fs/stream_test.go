package fs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/partlog/partlogtest"
	"github.com/partfs/partfs/record"
)

// streamLog is a log of several segments whose records vary in size:
// empty values, tombstones (also 500 in a row), headers, non-UTF-8 bytes
// and two records larger than a whole chunk. It returns the records too.
func streamLog(t *testing.T) (partlog.Log, []record.Record) {
	t.Helper()
	st := memlog.New(streamLogOptions)
	t.Cleanup(func() { st.Close() })
	return fillStreamLog(t, st)
}

var streamLogOptions = memlog.Options{Defaults: map[string]string{
	"segment.bytes": "1500000", "max.message.bytes": "4000000"}}

func fillStreamLog(t *testing.T, st *memlog.Store) (partlog.Log, []record.Record) {
	t.Helper()
	l := partlogtest.NewLog(t, st, "t")
	rng := rand.New(rand.NewSource(1))
	var all []record.Record
	for b := 0; b < 60; b++ {
		var recs []record.Record
		for i := 0; i < 1000; i++ {
			r := record.Record{Timestamp: int64(1 + rng.Intn(1e12))}
			switch n := rng.Intn(100); {
			case n < 3: // tombstone
			case n < 6:
				r.Value = []byte{}
			case n < 8:
				r.Value, r.Key = []byte{0xff, 'x', '"'}, []byte("k")
				r.Headers = []record.Header{{Key: "h", Value: []byte("v\n")}}
			default:
				r.Value = []byte(strings.Repeat(string(rune('a'+n%26)), rng.Intn(300)))
			}
			recs = append(recs, r)
		}
		if b == 30 { // a stretch longer than small ranges: empty ranges in plain
			for i := 100; i < 600; i++ {
				recs[i].Value = nil
			}
		}
		if b == 20 || b == 21 {
			recs[500].Value = bytes.Repeat([]byte("B"), 2*maxAhead+12345)
		}
		if _, err := l.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	snap, release := l.Segments()
	defer release()
	for _, s := range snap {
		_ = l.Read(s, s.Base, func(r *record.Record) bool {
			all = append(all, *r)
			return true
		})
	}
	return l, all
}

// recordsPerChunk is how many records from the start of l fill a chunk,
// as a reader's first rendering finds it.
func recordsPerChunk(l partlog.Log, k position.Kind) int64 {
	cur := position.Cursor{}
	_ = position.ReadStream(l, k, &cur, l.EndOffset(), &position.RenderOut{Dst: make([]byte, maxAhead)})
	return cur.Off
}

// renderAll is the expected stream: every record rendered, in order, with
// the stream position where each record starts.
func renderAll(k position.Kind, recs []record.Record) ([]byte, map[int64]int) {
	var out []byte
	start := map[int64]int{}
	for i := range recs {
		start[recs[i].Offset] = len(out)
		out = position.Render(out, k, &recs[i])
	}
	return out, start
}

// TestStreamMatchesRendering: a stream's chunks, from the start and from
// inside a record, up to a limit or the end, concatenate to the rendering
// of the records; every chunk's cursor is the position where it ends;
// chunks end at record boundaries unless a record alone is larger.
func TestStreamMatchesRendering(t *testing.T) {
	l, recs := streamLog(t)
	end := recs[len(recs)-1].Offset + 1
	for _, k := range []position.Kind{position.Plain, position.JSON} {
		want, start := renderAll(k, recs)
		posOf := func(c position.Cursor) int {
			if c.Off >= end {
				return len(want)
			}
			return start[c.Off] + c.Skip
		}
		for _, c := range []struct {
			from     position.Cursor
			limit    int64
			perChunk int64
		}{
			{position.Cursor{}, end, recordsPerChunk(l, k)},
			{position.Cursor{Off: 7, Skip: 3}, end, 1},
			{position.Cursor{Off: 20500, Skip: 1000}, end, 37},
			{position.Cursor{Off: 100}, 40000, 5000},
			{position.Cursor{Off: 100}, 40000, 100000},
		} {
			name := fmt.Sprintf("%v from %+v to %d by %d", k, c.from, c.limit, c.perChunk)
			from, to := posOf(c.from), len(want)
			if c.limit < end {
				to = start[c.limit]
			}
			s := startStream(l, nil, k, c.from, c.limit, c.perChunk)
			var got []byte
			for ch := s.next(); ch != nil; ch = s.next() {
				got = append(got, ch.data...)
				if ch.err != nil {
					t.Fatalf("%s: %v", name, ch.err)
				}
				if p := posOf(ch.cur); p != from+len(got) {
					t.Fatalf("%s: chunk ends at %d, cursor %+v is %d", name, from+len(got), ch.cur, p)
				}
				if !ch.last && ch.cur.Skip != 0 && len(ch.data) != maxAhead {
					t.Fatalf("%s: a short chunk ends inside record %d", name, ch.cur.Off)
				}
				ch.unref()
			}
			s.stop()
			if !bytes.Equal(got, want[from:to]) {
				t.Fatalf("%s: %d bytes differ from the %d rendered", name, len(got), to-from)
			}
		}
	}
}

// TestStreamStop: a reader that stops a stream midway ends its goroutine
// (TestMain checks for leaks) and releases the chunks it had ready.
func TestStreamStop(t *testing.T) {
	l, recs := streamLog(t)
	s := startStream(l, nil, position.Plain, position.Cursor{}, recs[len(recs)-1].Offset+1, 100)
	c := s.next()
	if c == nil || c.last || len(c.data) == 0 {
		t.Fatalf("first chunk %+v", c)
	}
	s.stop()
	c.unref()
}

// failingLog fails (or panics) in Read once n records were passed on
// (by all its readers together).
type failingLog struct {
	partlog.Log
	n     atomic.Int64
	panic bool
}

var errInjected = errors.New("injected read failure")

func (f *failingLog) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	var err error
	e := f.Log.Read(seg, from, func(r *record.Record) bool {
		if f.n.Add(-1) < 0 {
			if f.panic {
				panic("injected")
			}
			err = errInjected
			return false
		}
		return fn(r)
	})
	if err != nil {
		return err
	}
	return e
}

// TestStreamError: a read error or a panic ends the stream with the error
// after the bytes rendered before it, and the cursor at their end.
func TestStreamError(t *testing.T) {
	l, recs := streamLog(t)
	want, start := renderAll(position.Plain, recs)
	for _, p := range []bool{false, true} {
		fl := &failingLog{Log: l, panic: p}
		fl.n.Store(30000)
		s := startStream(fl, nil, position.Plain, position.Cursor{}, recs[len(recs)-1].Offset+1, 1000)
		var got []byte
		var last *chunk
		for c := s.next(); c != nil; c = s.next() {
			got = append(got, c.data...)
			if last != nil {
				last.unref()
			}
			last = c
		}
		s.stop()
		if last == nil || !last.last || last.err == nil {
			t.Fatalf("panic=%v: stream ended without error: %+v", p, last)
		}
		if p != strings.Contains(last.err.Error(), "panicked") || !p && !errors.Is(last.err, errInjected) {
			t.Errorf("panic=%v: error %v", p, last.err)
		}
		if at := start[last.cur.Off] + last.cur.Skip; at != len(got) || !bytes.Equal(got, want[:at]) {
			t.Errorf("panic=%v: %d bytes before the error, cursor at %d", p, len(got), at)
		}
		last.unref()
	}
}

// TestSequentialReadsThroughTheMount: cat and dd with small and odd block
// sizes (several replies per chunk, streams started and continued) read
// exactly the rendering of both views.
func TestSequentialReadsThroughTheMount(t *testing.T) {
	m, st := mountMem(t, streamLogOptions)
	_, recs := fillStreamLog(t, st)
	for _, k := range []position.Kind{position.Plain, position.JSON} {
		want, _ := renderAll(k, recs)
		file := "t/0/log"
		if k == position.JSON {
			file += ".jsonl"
		}
		for _, cmd := range []string{"cat %s", "dd status=none bs=4096 if=%s", "dd status=none bs=100001 if=%s"} {
			cmd = fmt.Sprintf(cmd, file)
			if got := m.Sh(cmd); got != string(want) {
				t.Errorf("%s: %d bytes differ from the %d rendered", cmd, len(got), len(want))
			}
		}
	}
}

// TestChunkReplies: replies are slices of the chunk without copies; the
// buffer stays referenced until the handle and every reply let it go.
func TestChunkReplies(t *testing.T) {
	c := newChunk(maxAhead)
	c.data = (*c.buf)[:10]
	copy(c.data, "0123456789")
	r1, n1 := c.reply(4)
	r2, n2 := c.reply(100)
	if n1 != 4 || n2 != 6 || len(c.data) != 0 || r1.Size() != 4 || r2.Size() != 6 {
		t.Fatalf("replies of %d and %d bytes, %d left", n1, n2, len(c.data))
	}
	got, _ := r2.Bytes(nil)
	if string(got) != "456789" {
		t.Errorf("second reply %q", got)
	}
	c.unref()
	r1.Done()
	r1.Done() // a second Done is harmless
	if c.refs.Load() != 1 || c.buf == nil {
		t.Fatalf("refs %d after two of three releases", c.refs.Load())
	}
	r2.Done()
	if c.refs.Load() != 0 || c.buf != nil {
		t.Fatalf("refs %d after the last release", c.refs.Load())
	}
}

// TestReuseAhead: a handle renders again into its buffer only when no
// reply holds it and it is large enough.
func TestReuseAhead(t *testing.T) {
	h := &viewHandle{}
	h.ahead = newChunk(minAhead)
	h.ahead.data = (*h.ahead.buf)[:100]
	r, _ := h.ahead.reply(10)
	held := h.ahead
	if c := h.reuseAhead(minAhead); c == held || held.buf == nil {
		t.Fatalf("the buffer of a reply in flight was reused")
	} else {
		h.ahead = c
	}
	r.Done()
	if held.refs.Load() != 0 {
		t.Errorf("refs %d after the handle and the reply let go", held.refs.Load())
	}
	c := h.ahead
	if h.reuseAhead(minAhead) != c {
		t.Errorf("an idle buffer was not reused")
	}
	h.ahead = c
	if h.reuseAhead(2*minAhead) == c || c.buf != nil {
		t.Errorf("a small buffer was reused for a larger rendering, or not released")
	}
}
