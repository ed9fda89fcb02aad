package fs

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/metrics"
	"github.com/partfs/partfs/partlog/memlog"
)

// Directories' attributes reach the kernel with dirAttrTimeout, from their
// lookup and their getattr, so a path walk does not ask for each of its
// directories again; a file's (log, @offset/N) with none from its getattr,
// so its size is asked for at every stat, and a window's lookup gives them
// windowAttrTimeout, its name's own timeout.
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
		want, atLookup := dirAttrTimeout, dirAttrTimeout
		switch {
		case c.name == "3":
			want, atLookup = 0, windowAttrTimeout
		case !c.dir:
			want, atLookup = 0, 0
		}
		var a fuse.AttrOut
		ch.Operations().(gofs.NodeGetattrer).Getattr(ctx, nil, &a)
		if out.AttrTimeout() != atLookup || a.Timeout() != want || (out.Mode&fuse.S_IFDIR != 0) != c.dir {
			t.Fatalf("%s: mode %o, attribute timeout %v at lookup, %v at getattr; want %v, %v",
				c.name, out.Mode, out.AttrTimeout(), a.Timeout(), atLookup, want)
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

// Opening @offset/N right after its lookup (os.ReadFile: open, fstat,
// reads) asks the daemon for no attributes beyond the lookup's own: the
// kernel's permission check and the fstat take the lookup's. A stat a few
// clock ticks later asks again: after an append it shows the window's new
// size.
func TestWindowOpenAsksNoGetattr(t *testing.T) {
	st := memlog.New(memlog.Options{})
	mets := metrics.New(st)
	m := mountWith(t, Options{Store: st, Metrics: mets})
	m.Sh("mkdir t && seq 0 99 | sed 's/^/line /' >> t/0/log && stat t/0/@offset > /dev/null")
	before := getattrs(t, mets)
	const opens = 20
	for i := 0; i < opens; i++ {
		b, err := os.ReadFile(m.Path(fmt.Sprintf("t/0/@offset/%d", 80+i)))
		if want := fmt.Sprintf("line %d\n", 80+i); err != nil || !strings.HasPrefix(string(b), want) || len(b) != (20-i)*8 {
			t.Fatalf("@offset/%d: %q, %v (want %d bytes from %q)", 80+i, b, err, (20-i)*8, want)
		}
	}
	// one per lookup (its attributes); a GETATTR for each open's check
	// and fstat would add two more (a few allowed for a preempted open)
	if n := getattrs(t, mets) - before; n < opens || n > opens+opens/4 {
		t.Fatalf("%d getattrs for %d lookups and opens of windows, want %d", n, opens, opens)
	}
	f, err := os.Open(m.Path("t/0/@offset/99"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m.Sh("echo 'line 100' >> t/0/log")
	time.Sleep(30 * time.Millisecond) // a few clock ticks: the lookup's attributes are gone
	for _, c := range []struct {
		name string
		stat func() (os.FileInfo, error)
	}{{"stat", func() (os.FileInfo, error) { return os.Stat(m.Path("t/0/@offset/99")) }}, {"fstat", f.Stat}} {
		if fi, err := c.stat(); err != nil || fi.Size() != 17 {
			t.Fatalf("%s of @offset/99 after an append: %v, %v; want 17 bytes", c.name, fi, err)
		}
	}
}

// getattrs is how many getattr requests the daemon answered.
func getattrs(t *testing.T, mets *metrics.Metrics) int {
	t.Helper()
	text, err := mets.Text()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, `partfs_fuse_operations_total{op="getattr"} `); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}
