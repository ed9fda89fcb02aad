package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// fixedDir is embedded by the directories whose entries no client moves,
// links or removes (a partition directory, @offset/, @time/, segments/):
// rename, link and unlink fail with EPERM and change nothing (docs/spec.md §4).
type fixedDir struct{ fp *part }

var (
	_ = (gofs.NodeRenamer)((*fixedDir)(nil))
	_ = (gofs.NodeLinker)((*fixedDir)(nil))
	_ = (gofs.NodeUnlinker)((*fixedDir)(nil))
)

func (d *fixedDir) refuse(op, name string) syscall.Errno {
	return d.fp.fsys.refuse(d.fp.lg.WithField("file", name), op)
}

func (d *fixedDir) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return d.refuse("rename", name)
}

func (d *fixedDir) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, d.refuse("link", name)
}

func (d *fixedDir) Unlink(ctx context.Context, name string) syscall.Errno {
	return d.refuse("unlink", name)
}
