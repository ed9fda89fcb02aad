package fs

import (
	"context"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/partlog/memlog"
)

// Directories' attributes reach the kernel with dirAttrTimeout, from their
// lookup and their getattr, so a path walk does not ask for each of its
// directories again; a file's (log, @offset/N) with none, so its size is
// asked for at every stat.
func TestDirAttributesKept(t *testing.T) {
	st := memlog.New(streamLogOptions)
	fillStreamLog(t, st)
	f := New(Options{Store: st})
	defer f.Close()
	root := f.Root()
	gofs.NewNodeFS(root, &gofs.Options{})
	ctx := context.Background()
	var a fuse.AttrOut
	if root.(gofs.NodeGetattrer).Getattr(ctx, nil, &a); a.Timeout() != dirAttrTimeout {
		t.Fatalf("root: attribute timeout %v, want %v", a.Timeout(), dirAttrTimeout)
	}
	node := root.EmbeddedInode()
	for _, c := range []struct {
		name string
		dir  bool
	}{{"t", true}, {"0", true}, {"log", false}, {"@offset", true}, {"3", false}} {
		var out fuse.EntryOut
		ch, errno := node.Operations().(gofs.NodeLookuper).Lookup(ctx, c.name, &out)
		if errno != 0 {
			t.Fatalf("lookup %s: %v", c.name, errno)
		}
		want := dirAttrTimeout
		if !c.dir {
			want = 0
		}
		var a fuse.AttrOut
		ch.Operations().(gofs.NodeGetattrer).Getattr(ctx, nil, &a)
		if out.AttrTimeout() != want || a.Timeout() != want || (out.Mode&fuse.S_IFDIR != 0) != c.dir {
			t.Fatalf("%s: mode %o, attribute timeout %v at lookup, %v at getattr; want %v",
				c.name, out.Mode, out.AttrTimeout(), a.Timeout(), want)
		}
		if c.name != "log" {
			node = ch
		}
	}
}
