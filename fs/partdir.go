package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/fs/position"
)

// partNode is a partition directory (docs/spec.md §2).
type partNode struct{ fixedDir }

// partEntry is one entry of a partition directory: its name and mode, has
// (nil: always there) saying whether this partition has it, and make the
// node it names.
type partEntry struct {
	name string
	mode uint32
	has  func(p *part) bool
	make func(p *part) gofs.InodeEmbedder
}

// partEntries lists a partition directory in the order ls shows it.
var partEntries = []partEntry{
	{"log", syscall.S_IFREG, nil, func(p *part) gofs.InodeEmbedder { return newLogNode(p, "log", position.Plain) }},
	{"log.jsonl", syscall.S_IFREG, nil, func(p *part) gofs.InodeEmbedder { return newLogNode(p, "log.jsonl", position.JSON) }},
	{"@offset", syscall.S_IFDIR, nil, func(p *part) gofs.InodeEmbedder {
		return &windowDir{fixedDir: newFixedDir(p), byTime: false}
	}},
	{"@time", syscall.S_IFDIR, nil, func(p *part) gofs.InodeEmbedder {
		return &windowDir{fixedDir: newFixedDir(p), byTime: true}
	}},
	{"@key", syscall.S_IFDIR, nil, func(p *part) gofs.InodeEmbedder { return &keyDir{dir: dir{fsys: p.fsys, writable: true}, p: p} }},
	{"stat", syscall.S_IFREG, nil, func(p *part) gofs.InodeEmbedder {
		return &contentNode{fsys: p.fsys, lg: p.lg.WithField("file", "stat"), gen: p.statText, sync: p.log.Sync}
	}},
	// an internal topic's records decoded
	{decodedName, syscall.S_IFREG, func(p *part) bool { return p.decoded() != nil }, func(p *part) gofs.InodeEmbedder {
		return &contentNode{fsys: p.fsys, lg: p.lg.WithField("file", decodedName), gen: p.decoded().content, sync: p.log.Sync, live: true}
	}},
	// Kafka's own files, where the Log is a partlog.SegmentFiler
	{"segments", syscall.S_IFDIR, func(p *part) bool { _, ok := p.segmentFiler(); return ok }, func(p *part) gofs.InodeEmbedder {
		sf, _ := p.segmentFiler()
		return &segmentsDir{fixedDir: newFixedDir(p), files: sf}
	}},
}

// present reports whether p has e.
func (e *partEntry) present(p *part) bool { return e.has == nil || e.has(p) }

func (n *partNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ents := make([]fuse.DirEntry, 0, len(partEntries))
	for i := range partEntries {
		if e := &partEntries[i]; e.present(n.p) {
			ents = append(ents, fuse.DirEntry{Name: e.name, Mode: e.mode})
		}
	}
	return gofs.NewListDirStream(ents), 0
}

func (n *partNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	defer guard(n.p.lg.WithField("file", name), "lookup", &errno)
	for i := range partEntries {
		if e := &partEntries[i]; e.name == name && e.present(n.p) {
			return child(ctx, n.EmbeddedInode(), name, e.mode, out, func() gofs.InodeEmbedder { return e.make(n.p) }), 0
		}
	}
	return nil, syscall.ENOENT
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
