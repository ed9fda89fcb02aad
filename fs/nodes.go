package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The roles the nodes and open files of the tree play, each a set of
// go-fuse capabilities; the assertions below say which type plays which,
// so that a missing method fails the build.
type (
	// dirNode is every directory: looked up, listed, stat-ed.
	dirNode interface {
		gofs.InodeEmbedder
		gofs.NodeLookuper
		gofs.NodeReaddirer
		gofs.NodeGetattrer
	}
	// createDir is a directory in which a file can be created.
	createDir interface {
		dirNode
		gofs.NodeCreater
	}
	// treeDir is a level of the topic tree (root, topic, partition): it
	// answers every change of its names, most with a refusal.
	treeDir interface {
		createDir
		gofs.NodeMkdirer
		gofs.NodeRmdirer
		gofs.NodeUnlinker
	}
	// fixedNames is a directory whose names never move, link or go.
	fixedNames interface {
		gofs.NodeRenamer
		gofs.NodeLinker
		gofs.NodeUnlinker
	}
	// fileNode is every file: opened, stat-ed, truncated (or refused).
	fileNode interface {
		gofs.InodeEmbedder
		gofs.NodeOpener
		gofs.NodeGetattrer
		gofs.NodeSetattrer
	}
	// rwHandle is an open of a file that takes writes: read, write, flush
	// (the close, when a write takes effect) and fsync.
	rwHandle interface {
		gofs.FileReader
		gofs.FileWriter
		gofs.FileFlusher
		gofs.FileFsyncer
	}
)

var (
	_ = []treeDir{(*rootNode)(nil), (*topicNode)(nil), (*partNode)(nil)}
	_ = []fixedNames{(*partNode)(nil), (*windowDir)(nil), (*segmentsDir)(nil)}
	_ = []dirNode{(*windowDir)(nil), (*segmentsDir)(nil), (*schemasDir)(nil), (*subjectDir)(nil)}
	_ = []createDir{(*groupsDir)(nil), (*keyDir)(nil)}
	_ = []gofs.NodeUnlinker{(*keyDir)(nil)}
	_ = []fileNode{(*contentNode)(nil), (*viewNode)(nil), (*keyNode)(nil), (*rawFile)(nil)}
	_ = []rwHandle{(*contentHandle)(nil), (*viewHandle)(nil), (*keyHandle)(nil)}
	_ = []gofs.FileGetattrer{(*contentHandle)(nil), (*viewHandle)(nil)}
	_ = []gofs.FileReleaser{(*viewHandle)(nil), (*rawHandle)(nil)}
	_ = []gofs.FileReader{(*rawHandle)(nil)}
	_ = []gofs.FilePassthroughFder{(*rawHandle)(nil)}
)

// dir is embedded by every directory node: its inode, and Getattr, which
// answers the directory's attributes (FS.dirAttr), writable where a client
// makes names in it (the root, a topic, @key/).
type dir struct {
	gofs.Inode
	fsys     *FS
	writable bool
}

func (d *dir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fsys.dirAttr(out, d.writable)
	return 0
}

// fixedDir is embedded by the directories of a partition whose entries no
// client moves, links or removes (the partition directory, @offset/,
// @time/, segments/): rename, link and unlink fail with EPERM and change
// nothing (docs/spec.md §4).
type fixedDir struct {
	dir
	p *part
}

func newFixedDir(p *part) fixedDir { return fixedDir{dir: dir{fsys: p.fsys}, p: p} }

func (d *fixedDir) refuse(op, name string) syscall.Errno {
	return d.fsys.refuse(d.p.lg.WithField("file", name), op)
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
