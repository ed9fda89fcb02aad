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

// Kept directory attributes do not hide changes to the tree: after every
// directory was stat'ed, a topic made by mkdir, a partition added by mkdir
// and a topic and partition the store made itself are seen at once by
// find, ls -l and du, with the attributes stat gave before.
func TestTreeChangesSeenWithKeptDirAttributes(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir a")
	before := m.Sh("stat -c '%A %h %s %Y' . a a/0")
	m.Sh("mkdir b && mkdir a/1")
	if err := st.CreateTopic("c"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddPartition("c", 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cmd, want string }{
		{"find . -maxdepth 2 -type d | sort", ".\n./a\n./a/0\n./a/1\n./b\n./b/0\n./c\n./c/0\n./c/1\n"},
		{"ls -l | tail -n +2 | awk '{print $1, $NF}'", "drwxr-xr-x a\ndrwxr-xr-x b\ndrwxr-xr-x c\n"},
		{"du -a c | awk '{print $2}' | grep -x 'c/[01]' | sort", "c/0\nc/1\n"},
	} {
		if got := m.Sh(c.cmd); got != c.want {
			t.Fatalf("%s = %q, want %q", c.cmd, got, c.want)
		}
	}
	if after := m.Sh("stat -c '%A %h %s %Y' . a a/0"); after != before {
		t.Fatalf("directory attributes changed: %q, then %q", before, after)
	}
}
