package index

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/vfs"
)

// TestSettleWritesOnlyADifference: an index rebuilt in memory settles on
// the file's index: a file holding exactly its entries is not written
// (not even opened for a write: an injected write error stays unseen);
// a preallocated file, one with other entries and one cut short are
// given the rebuilt entries, trimmed, and lookups answer from them.
func TestSettleWritesOnlyADifference(t *testing.T) {
	built := func() (*OffsetIndex, *TimeIndex) {
		mem := vfs.NewCrashFS()
		of, err := mem.Create("/b.index")
		must(t, err)
		tf, err := mem.Create("/b.timeindex")
		must(t, err)
		ox, err := OpenOffsetIndex(of, 100, 800)
		must(t, err)
		tx, err := OpenTimeIndex(tf, 100, 840)
		must(t, err)
		for i := int64(0); i < 5; i++ {
			must(t, ox.Append(100+10*i+9, int32(1000*i)))
			must(t, tx.MaybeAppend(5000+i, 100+10*i+9, false))
		}
		return ox, tx
	}
	bo, bt := built()
	var want bytes.Buffer
	for i := 0; i < 5; i++ {
		e := make([]byte, OffsetEntrySize)
		_, err := bo.f.ReadAt(e, int64(i*OffsetEntrySize))
		must(t, err)
		want.Write(e)
	}
	dir := t.TempDir()
	cases := map[string]func(path string){
		"same": func(path string) { must(t, os.WriteFile(path, want.Bytes(), 0o644)) },
		"preallocated": func(path string) {
			must(t, os.WriteFile(path, append(want.Bytes(), make([]byte, 800)...), 0o644))
		},
		"other entries": func(path string) {
			b := bytes.Clone(want.Bytes())
			b[7]++
			must(t, os.WriteFile(path, b, 0o644))
		},
		"short": func(path string) { must(t, os.WriteFile(path, want.Bytes()[:16], 0o644)) },
	}
	for name, setup := range cases {
		path := filepath.Join(dir, name+".index")
		setup(path)
		injected := errors.New("injected write")
		inj := vfs.FailNth(vfs.OpWrite, 1, injected)
		efs := vfs.NewErrorFS(vfs.Default, inj)
		f, err := efs.OpenFile(path, os.O_RDWR, 0)
		must(t, err)
		ox, err := OpenOffsetIndex(f, 100, 0)
		must(t, err)
		wrote, err := ox.Settle(bo)
		if name == "same" {
			if wrote || err != nil {
				t.Fatalf("%s: wrote %v, %v", name, wrote, err)
			}
		} else {
			if !wrote || !errors.Is(err, injected) {
				t.Fatalf("%s: wrote %v, %v: want the injected write error", name, wrote, err)
			}
			ox.Release()
			f, err = vfs.Default.OpenFile(path, os.O_RDWR, 0)
			must(t, err)
			ox, err = OpenOffsetIndex(f, 100, 0)
			must(t, err)
			if wrote, err = ox.Settle(bo); !wrote || err != nil {
				t.Fatalf("%s: wrote %v, %v", name, wrote, err)
			}
		}
		if got := testutil.ReadFile(t, path); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%s: file holds %x, want %x", name, got, want.Bytes())
		}
		if off, pos := ox.Lookup(125); ox.Entries() != 5 || ox.MaxEntries() != 5 || off != 119 || pos != 1000 {
			t.Fatalf("%s: %d entries of %d, lookup (%d, %d)", name, ox.Entries(), ox.MaxEntries(), off, pos)
		}
		if ox.LastOffset() != 149 {
			t.Fatalf("%s: last offset %d", name, ox.LastOffset())
		}
		must(t, ox.Close())
	}
	tpath := filepath.Join(dir, "t.timeindex")
	must(t, os.WriteFile(tpath, make([]byte, 840), 0o644))
	tx, err := OpenTimeIndex(openFile(t, tpath), 100, 0)
	must(t, err)
	if wrote, err := tx.Settle(bt); !wrote || err != nil {
		t.Fatalf("time index: wrote %v, %v", wrote, err)
	}
	if ts, off := tx.LastEntry(); tx.Entries() != 5 || ts != 5004 || off != 149 || len(testutil.ReadFile(t, tpath)) != 5*TimeEntrySize {
		t.Fatalf("time index: %d entries, last (%d, %d)", tx.Entries(), ts, off)
	}
	if wrote, err := tx.Settle(bt); wrote || err != nil {
		t.Fatalf("time index settled twice: wrote %v, %v", wrote, err)
	}
	must(t, tx.Close())
}
