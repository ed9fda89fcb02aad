package fs

import (
	"context"
	"slices"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// partNode is a partition directory (SPEC §2).
type partNode struct {
	gofs.Inode
	fixedDir
	p *part
}

var (
	_ = (gofs.NodeLookuper)((*partNode)(nil))
	_ = (gofs.NodeReaddirer)((*partNode)(nil))
	_ = (gofs.NodeGetattrer)((*partNode)(nil))
	_ = (gofs.NodeUnlinker)((*partNode)(nil))
	_ = (gofs.NodeRmdirer)((*partNode)(nil))
	_ = (gofs.NodeMkdirer)((*partNode)(nil))
	_ = (gofs.NodeCreater)((*partNode)(nil))
)

var partEntries = []fuse.DirEntry{
	{Name: "log", Mode: syscall.S_IFREG},
	{Name: "log.jsonl", Mode: syscall.S_IFREG},
	{Name: "@offset", Mode: syscall.S_IFDIR},
	{Name: "@time", Mode: syscall.S_IFDIR},
	{Name: "@key", Mode: syscall.S_IFDIR},
	{Name: "stat", Mode: syscall.S_IFREG},
}

// segmentsEntry is listed where the partition's Log is a partlog.SegmentFiler.
var segmentsEntry = fuse.DirEntry{Name: "segments", Mode: syscall.S_IFDIR}

func (n *partNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.p.fsys.dirAttr(out, false)
	return 0
}

func (n *partNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ents := partEntries
	if n.p.decoded() != nil {
		ents = append(slices.Clip(ents), fuse.DirEntry{Name: decodedName, Mode: syscall.S_IFREG})
	}
	if _, ok := n.p.segmentFiler(); ok {
		ents = append(slices.Clip(ents), segmentsEntry)
	}
	return gofs.NewListDirStream(ents), 0
}

func (n *partNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	defer guard(n.p.lg.WithField("file", name), "lookup", &errno)
	mk, mode := n.childMaker(name)
	if mk == nil {
		return nil, syscall.ENOENT
	}
	return child(ctx, n.EmbeddedInode(), name, mode, out, mk), 0
}

func (n *partNode) childMaker(name string) (func() gofs.InodeEmbedder, uint32) {
	p := n.p
	switch name {
	case "log", "log.jsonl":
		k := plainKind
		if name == "log.jsonl" {
			k = jsonKind
		}
		return func() gofs.InodeEmbedder { return newLogNode(p, name, k) }, syscall.S_IFREG
	case "@offset":
		return func() gofs.InodeEmbedder { return &windowDir{fixedDir: fixedDir{p}, p: p, byTime: false} }, syscall.S_IFDIR
	case "@time":
		return func() gofs.InodeEmbedder { return &windowDir{fixedDir: fixedDir{p}, p: p, byTime: true} }, syscall.S_IFDIR
	case "@key":
		return func() gofs.InodeEmbedder { return &keyDir{p: p} }, syscall.S_IFDIR
	case "segments":
		if sf, ok := p.segmentFiler(); ok {
			return func() gofs.InodeEmbedder { return &segmentsDir{fixedDir: fixedDir{p}, p: p, files: sf} }, syscall.S_IFDIR
		}
	case decodedName:
		if v := p.decoded(); v != nil {
			return func() gofs.InodeEmbedder {
				return &contentNode{fsys: p.fsys, lg: p.lg.WithField("file", name), gen: v.content, sync: p.log.Sync, live: true}
			}, syscall.S_IFREG
		}
	case "stat":
		return func() gofs.InodeEmbedder {
			return &contentNode{fsys: p.fsys, lg: p.lg.WithField("file", "stat"), gen: p.statText, sync: p.log.Sync}
		}, syscall.S_IFREG
	}
	return nil, 0
}

func (n *partNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.p.fsys.refuse(n.p.lg.WithField("file", name), "rmdir")
}

func (n *partNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, n.p.fsys.refuse(n.p.lg.WithField("file", name), "mkdir")
}

func (n *partNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, n.p.fsys.refuse(n.p.lg.WithField("file", name), "create")
}
