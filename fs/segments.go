package fs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirLog is implemented by backends whose partitions are directories of
// Kafka files (logstore.Log); segments/ shows those files read-only.
type dirLog interface{ Dir() string }

// segmentsDir is segments/: the partition's files as they are.
type segmentsDir struct {
	gofs.Inode
	fixedDir
	p *part
}

var (
	_ = (gofs.NodeLookuper)((*segmentsDir)(nil))
	_ = (gofs.NodeReaddirer)((*segmentsDir)(nil))
	_ = (gofs.NodeGetattrer)((*segmentsDir)(nil))
)

func (d *segmentsDir) dir() string {
	if dl, ok := d.p.log.(dirLog); ok {
		return dl.Dir()
	}
	return ""
}

func (d *segmentsDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.p.fsys.dirAttr(out)
	return 0
}

func (d *segmentsDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	var ents []fuse.DirEntry
	if dir := d.dir(); dir != "" {
		des, err := os.ReadDir(dir)
		if err != nil {
			return nil, fail(d.p.lg.WithField("file", dir), "readdir", err)
		}
		for _, de := range des {
			if de.Type().IsRegular() {
				ents = append(ents, fuse.DirEntry{Name: de.Name(), Mode: syscall.S_IFREG})
			}
		}
	}
	return gofs.NewListDirStream(ents), 0
}

func (d *segmentsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	dir := d.dir()
	if dir == "" {
		return nil, syscall.ENOENT
	}
	path := filepath.Join(dir, name)
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil, syscall.ENOENT
	}
	ch := d.GetChild(name)
	if f, ok := opsOf[*rawFile](ch); !ok || !f.same(st) {
		ch = d.NewInode(ctx, &rawFile{p: d.p, path: path, st: st}, gofs.StableAttr{Mode: syscall.S_IFREG})
	}
	fillEntry(ctx, ch, out)
	volatile(out)
	return ch, 0
}

// rawFile is one file of the partition directory, read-only.
type rawFile struct {
	gofs.Inode
	p    *part
	path string
	st   os.FileInfo // the file at lookup
}

// same reports whether st is the file this node was looked up as: a
// lookup again finds the same inode (cp checks that a file it copies was
// not replaced), unless the name now names another file.
func (f *rawFile) same(st os.FileInfo) bool { return os.SameFile(f.st, st) }

// opsOf returns the node of ch if it is a T.
func opsOf[T gofs.InodeEmbedder](ch *gofs.Inode) (T, bool) {
	var zero T
	if ch == nil {
		return zero, false
	}
	t, ok := ch.Operations().(T)
	return t, ok
}

var (
	_ = (gofs.NodeGetattrer)((*rawFile)(nil))
	_ = (gofs.NodeOpener)((*rawFile)(nil))
	_ = (gofs.NodeSetattrer)((*rawFile)(nil))
)

func (f *rawFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	st, err := os.Stat(f.path)
	if err != nil {
		return syscall.ENOENT
	}
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = uint64(st.Size())
	out.Nlink = 1
	out.Blksize = smallBlksize
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		out.Blocks = uint64(sys.Blocks) // du: the disk the file takes
	}
	setTimes(&out.Attr, st.ModTime())
	return 0
}

func (f *rawFile) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return f.p.fsys.refuse(f.p.lg.WithField("file", f.path), "setattr")
}

func (f *rawFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	lg := f.p.lg.WithField("file", f.path)
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		return nil, 0, f.p.fsys.refuse(lg, "open")
	}
	fd, err := syscall.Open(f.path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, 0, fail(lg, "open", err)
	}
	return gofs.NewLoopbackFile(fd), fuse.FOPEN_DIRECT_IO, 0
}
