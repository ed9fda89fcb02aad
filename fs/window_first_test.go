package fs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// windowRead resolves a window name of partition t-0 of fsys as a lookup
// does, opens it and reads 8 KiB at 0 (head's first read) and then 64 KiB
// after it; it returns the window's size, both reads, and whether the
// lookup rendered a first chunk.
func windowRead(t *testing.T, fsys *FS, byTime bool, name string) (size int64, got []byte, first bool) {
	t.Helper()
	p, err := fsys.part("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	k, spec := position.Plain, name
	if s, ok := strings.CutSuffix(name, ".jsonl"); ok {
		k, spec = position.JSON, s
	}
	d := &windowDir{fixedDir: newFixedDir(p), byTime: byTime}
	v, fc, err := d.resolve(p.log, p.ly, k, spec)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	v.lg = p.lg
	if fc != nil {
		p.firsts.add(v, fc)
	}
	if size, _, err = v.size(p.ly); err != nil {
		t.Fatal(err)
	}
	fh, _, errno := v.Open(context.Background(), syscall.O_RDONLY)
	if errno != 0 {
		t.Fatalf("open %s: %v", name, errno)
	}
	h := fh.(*viewHandle)
	defer h.Release(context.Background())
	for _, n := range []int{8 << 10, 64 << 10} {
		res, errno := h.Read(context.Background(), make([]byte, n), int64(len(got)))
		if errno != 0 {
			t.Fatalf("read %s at %d: %v", name, len(got), errno)
		}
		b, _ := res.Bytes(nil)
		got = append(got, b...)
		if r, ok := res.(*chunkReply); ok {
			r.Done()
		}
	}
	return size, got, fc != nil
}

// TestWindowFirstRead: the first reads of @offset/N and @time/T (plain
// and position.JSON) give the bytes of the records from N (from T's offset) on,
// and the size is the rest of the stream, for N at and beside segment
// bases, beside the records larger than a chunk, at the ends, and for
// every form of T, both on a fresh mount (the lookup scans the segment)
// and on one that placed everything (it reads from a checkpoint). The
// lookup renders the first bytes itself wherever it reads the segment.
func TestWindowFirstRead(t *testing.T) {
	st := memlog.New(streamLogOptions)
	t.Cleanup(func() { st.Close() })
	l, all := fillStreamLog(t, st)
	snap, release := l.Segments()
	defer release()
	index := func(off int64) int { return sort.Search(len(all), func(i int) bool { return all[i].Offset >= off }) }
	offs := []int64{0, 1, 2, l.EndOffset() - 1, l.EndOffset()}
	for _, s := range snap[1:] {
		offs = append(offs, s.Base-1, s.Base, s.Base+1)
	}
	for i, r := range all {
		if len(r.Value) > maxAhead {
			offs = append(offs, all[i-1].Offset, r.Offset, r.Offset+1)
		}
	}
	rng := rand.New(rand.NewSource(3))
	for range 12 {
		offs = append(offs, rng.Int63n(l.EndOffset()))
	}
	type tcase struct {
		byTime   bool
		name     string
		from, to int // indexes into all of the first record and after the last
	}
	var cases []tcase
	for _, off := range offs {
		cases = append(cases, tcase{false, strconv.FormatInt(off, 10), index(off), len(all)})
	}
	cases = append(cases, tcase{false, "earliest", 0, len(all)}, tcase{false, "latest", len(all), len(all)})
	for _, r := range [][2]int64{{0, 3}, {snap[1].Base - 2, snap[1].Base + 3}, {snap[2].Base, snap[3].Base}, {5, 5}} {
		cases = append(cases, tcase{false, fmt.Sprintf("%d..%d", r[0], r[1]), index(r[0]), index(r[1])})
	}
	firstAt := func(ts int64) int {
		for i, r := range all {
			if r.Timestamp >= ts {
				return i
			}
		}
		return len(all)
	}
	now := time.UnixMilli(600_000_000_000)
	for _, i := range []int{0, 1, 999, 1000, 30500, len(all) - 1} {
		ts := all[i].Timestamp
		cases = append(cases, tcase{true, strconv.FormatInt(ts, 10), firstAt(ts), len(all)},
			tcase{true, strconv.FormatInt(ts+1, 10), firstAt(ts + 1), len(all)},
			tcase{true, time.UnixMilli(ts).UTC().Format(time.RFC3339Nano), firstAt(ts), len(all)})
	}
	maxTs, maxAt := int64(-1), 0
	for i, r := range all {
		if r.Timestamp > maxTs {
			maxTs, maxAt = r.Timestamp, i
		}
	}
	cases = append(cases, tcase{true, "earliest", 0, len(all)}, tcase{true, "latest", len(all), len(all)}, tcase{true, "max", maxAt, len(all)},
		tcase{true, "-10m", firstAt(now.Add(-10 * time.Minute).UnixMilli()), len(all)},
		tcase{true, "-1d2h", firstAt(now.Add(-26 * time.Hour).UnixMilli()), len(all)},
		tcase{true, "2000000000000", len(all), len(all)})
	t1, t2 := all[1000].Timestamp, all[30500].Timestamp
	cases = append(cases, tcase{true, fmt.Sprintf("%d..%d", t1, t2), firstAt(t1), max(firstAt(t1), firstAt(t2))})

	placed := New(Options{Store: st, Now: func() time.Time { return now }})
	for _, k := range []string{"", ".jsonl"} {
		kd := position.Plain
		if k != "" {
			kd = position.JSON
		}
		rendered := 0
		for _, c := range cases {
			want, wantSize := renderFrom(all, c.from, c.to, kd, 72<<10)
			for _, fsys := range []*FS{New(Options{Store: st, Now: placed.opt.Now}), placed} {
				size, got, first := windowRead(t, fsys, c.byTime, c.name+k)
				if size != wantSize {
					t.Errorf("%s%s: size %d, want %d", c.name, k, size, wantSize)
				}
				if w := want[:min(len(want), len(got), 72<<10)]; !bytes.Equal(got, w) {
					t.Errorf("%s%s: first reads %d bytes %.60q..., want %d bytes %.60q...", c.name, k, len(got), got, len(w), w)
				}
				if first {
					rendered++
				}
			}
		}
		if rendered < len(cases) {
			t.Errorf("%s: %d of %d lookups rendered their first bytes", kd, rendered, 2*len(cases))
		}
	}
}

// TestFirstChunkDroppedAfterChange: the first bytes a lookup rendered are
// delivered after an append (the records are the same) and dropped when
// compaction replaced their segment before the open.
func TestFirstChunkDroppedAfterChange(t *testing.T) {
	st := memlog.New(memlog.Options{})
	t.Cleanup(func() { st.Close() })
	if err := st.CreateTopic("t"); err != nil {
		t.Fatal(err)
	}
	l, err := st.Log("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	var recs []record.Record
	var want strings.Builder
	for i := range 100 {
		recs = append(recs, record.Record{Key: []byte{byte('a' + i%2)}, Value: []byte(strconv.Itoa(i))})
		if i >= 50 {
			fmt.Fprintf(&want, "%d\n", i)
		}
	}
	if _, err := l.Append(recs); err != nil {
		t.Fatal(err)
	}
	l.Roll()
	if _, err := l.Append(recs[:1]); err != nil {
		t.Fatal(err)
	}
	fsys := New(Options{Store: st})
	p, err := fsys.part("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func()
		keep   bool
	}{{func() {}, true}, {func() { _, _ = l.Append(recs[:1]) }, true}, {func() { l.CompactSealed(false) }, false}} {
		v, fc, err := (&windowDir{fixedDir: newFixedDir(p)}).resolve(p.log, p.ly, position.Plain, "50")
		if err != nil || fc == nil || string(fc.c.data) != want.String() {
			t.Fatalf("resolve: %v, first chunk %+v, want %q", err, fc, want.String())
		}
		v.lg = p.lg
		p.firsts.add(v, fc)
		c.change()
		_, limit, err := v.size(p.ly)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.takeFirst(limit); (got != nil) != c.keep {
			t.Errorf("first chunk delivered: %v, want %v", got != nil, c.keep)
		}
	}
}

// TestWindowNameKeepsItsInode: a window name looked up again while the
// kernel still knows it gets the same inode when it resolves to the same
// window (else the kernel drops the entry and looks the name up a second
// time), and a new one when it does not.
func TestWindowNameKeepsItsInode(t *testing.T) {
	m, _ := mountMem(t, memlog.Options{})
	m.Sh("mkdir t && seq 1 100 >> t/0/log")
	ino := func(name string) uint64 {
		t.Helper()
		st, err := os.Stat(m.Path("t/0/" + name))
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	a := ino("@offset/5")
	m.Sh("seq 101 110 >> t/0/log")
	time.Sleep(20 * time.Millisecond) // the kernel's entry (1 ns, at least a jiffy) has timed out
	if b := ino("@offset/5"); b != a {
		t.Errorf("@offset/5 looked up again: inode %d, then %d", a, b)
	}
	if c := ino("@offset/6"); c == a {
		t.Errorf("@offset/6 has @offset/5's inode %d", c)
	}
	if got := m.Sh("head -2 t/0/@offset/5"); got != "6\n7\n" {
		t.Errorf("head -2 @offset/5 = %q", got)
	}
}

// TestPeriodicSidecarSave: a mount saves changed sidecars while running,
// so a crash leaves little to recompute.
func TestPeriodicSidecarSave(t *testing.T) {
	st := memlog.New(memlog.Options{})
	m := mountWith(t, Options{Store: st, SaveInterval: 20 * time.Millisecond})
	m.Sh("mkdir t && seq 1 100 >> t/0/log && stat t/0/log > /dev/null")
	l, _ := st.Log("t", 0)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := l.LoadSidecar(position.SidecarName); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no sidecar saved while mounted")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFirstsHoldANodeOnce: a window looked up again moves to the back of
// the partition's first renderings, held once, so the windows looked up
// after it do not evict its fresh rendering through its older entry.
func TestFirstsHoldANodeOnce(t *testing.T) {
	chunkOf := func() *firstChunk {
		b := make([]byte, 1)
		c := &chunk{buf: &b}
		c.refs.Store(1)
		return &firstChunk{c: c}
	}
	var fs firsts
	nodes := make([]*viewNode, maxFirsts)
	for i := range nodes {
		nodes[i] = &viewNode{}
		fs.add(nodes[i], chunkOf())
	}
	fs.add(nodes[0], chunkOf()) // looked up again
	fs.add(&viewNode{}, chunkOf())
	if nodes[0].first == nil {
		t.Error("the window looked up again lost its first rendering")
	}
	if nodes[1].first != nil {
		t.Error("the oldest other window kept its first rendering past the bound")
	}
	if len(fs.nodes) != maxFirsts {
		t.Errorf("%d windows held, want %d", len(fs.nodes), maxFirsts)
	}
}

// renderFrom renders all[i:j] in kind k up to n bytes or a little more,
// and returns the length of the whole rendering.
func renderFrom(all []record.Record, i, j int, k position.Kind, n int) (b []byte, size int64) {
	for ; i < j; i++ {
		if len(b) < n {
			b = position.Render(b, k, &all[i])
		} else {
			size += int64(len(position.Render(nil, k, &all[i])))
		}
	}
	return b, size + int64(len(b))
}
