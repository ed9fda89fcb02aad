package fs

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/partlog"
)

// rootNode lists topics and .metrics; mkdir creates a topic.
type rootNode struct{ dir }

const metricsName = ".metrics"

func (n *rootNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	lg := n.fsys.lg.WithField("file", name)
	defer guard(lg, "lookup", &errno)
	if name == metricsName {
		return child(ctx, n.EmbeddedInode(), name, syscall.S_IFREG, out, func() gofs.InodeEmbedder {
			return &contentNode{fsys: n.fsys, lg: lg, gen: n.fsys.metricsText}
		}), 0
	}
	if c := n.fsys.catalog(); c != nil && name == schemasName {
		return child(ctx, n.EmbeddedInode(), name, syscall.S_IFDIR, out, func() gofs.InodeEmbedder {
			return &schemasDir{dir: dir{fsys: n.fsys}, c: c}
		}), 0
	}
	if name == groupsName {
		return child(ctx, n.EmbeddedInode(), name, syscall.S_IFDIR, out, func() gofs.InodeEmbedder {
			return &groupsDir{dir{fsys: n.fsys}}
		}), 0
	}
	if partlog.CheckTopic(name) != nil {
		return nil, fail(lg, "lookup", fmt.Errorf("topic name %q: %w", name, partlog.ErrInvalid))
	}
	if _, err := n.fsys.opt.Store.Partitions(name); err != nil {
		return nil, toErrno(err)
	}
	return child(ctx, n.EmbeddedInode(), name, syscall.S_IFDIR, out, func() gofs.InodeEmbedder {
		return n.fsys.topicNode(name)
	}), 0
}

func (n *rootNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ents := []fuse.DirEntry{{Name: metricsName, Mode: syscall.S_IFREG}}
	_, groupStore := n.fsys.opt.Store.(partlog.GroupStore)
	if _, err := n.fsys.opt.Store.Partitions(internaltopic.ConsumerOffsetsName); err == nil || groupStore {
		ents = append(ents, fuse.DirEntry{Name: groupsName, Mode: syscall.S_IFDIR})
	}
	if n.fsys.catalog() != nil {
		ents = append(ents, fuse.DirEntry{Name: schemasName, Mode: syscall.S_IFDIR})
	}
	topics, err := n.fsys.opt.Store.Topics()
	if err != nil {
		return nil, fail(n.fsys.lg, "readdir", err)
	}
	for _, t := range topics {
		ents = append(ents, fuse.DirEntry{Name: t, Mode: syscall.S_IFDIR})
	}
	return gofs.NewListDirStream(ents), 0
}

func (n *rootNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	lg := n.fsys.lg.WithField("topic", name)
	defer guard(lg, "mkdir", &errno)
	if n.fsys.ro {
		return nil, fail(lg, "mkdir", partlog.ErrReadOnly)
	}
	if partlog.CheckTopic(name) != nil {
		return nil, fail(lg, "mkdir", fmt.Errorf("topic name %q: %w", name, partlog.ErrInvalid))
	}
	if err := n.fsys.opt.Store.CreateTopic(name); err != nil {
		return nil, fail(lg, "mkdir", err)
	}
	lg.Info("topic created")
	return child(ctx, n.EmbeddedInode(), name, syscall.S_IFDIR, out, func() gofs.InodeEmbedder {
		return n.fsys.topicNode(name)
	}), 0
}

func (n *rootNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.fsys.refuse(n.fsys.lg.WithField("topic", name), "rmdir")
}

func (n *rootNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.fsys.refuse(n.fsys.lg.WithField("file", name), "unlink")
}

func (n *rootNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, n.fsys.refuse(n.fsys.lg.WithField("file", name), "create")
}

// refuse answers a change the tree does not allow: EROFS on a read-only
// mount, else EPERM.
func (f *FS) refuse(lg *logrus.Entry, op string) syscall.Errno {
	if f.ro {
		return fail(lg, op, partlog.ErrReadOnly)
	}
	return fail(lg, op, fmt.Errorf("%s: %w", op, errEPERM))
}

func (f *FS) metricsText() ([]byte, error) {
	if f.opt.Metrics == nil {
		return nil, nil
	}
	return f.opt.Metrics.Text()
}

// topicNode holds config and the partitions; mkdir N adds partition N.
type topicNode struct {
	dir
	topic string
	lg    *logrus.Entry
}

func (f *FS) topicNode(topic string) *topicNode {
	return &topicNode{dir: dir{fsys: f, writable: true}, topic: topic, lg: f.lg.WithField("topic", topic)}
}

// parsePartition accepts a canonical non-negative decimal.
func parsePartition(name string) (int, bool) {
	n, err := strconv.Atoi(name)
	if err != nil || n < 0 || strconv.Itoa(n) != name {
		return 0, false
	}
	return n, true
}

func (n *topicNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	lg := n.lg.WithField("file", name)
	defer guard(lg, "lookup", &errno)
	if name == "config" {
		return child(ctx, n.EmbeddedInode(), name, syscall.S_IFREG, out, func() gofs.InodeEmbedder {
			return newConfigNode(n.fsys, n.topic, lg)
		}), 0
	}
	p, ok := parsePartition(name)
	if !ok {
		return nil, syscall.ENOENT
	}
	ps, err := n.partitions()
	if err != nil {
		return nil, toErrno(err)
	}
	if !slices.Contains(ps, p) {
		return nil, syscall.ENOENT
	}
	return n.partChild(ctx, name, p, out)
}

func (n *topicNode) partChild(ctx context.Context, name string, p int, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	pt, err := n.fsys.part(n.topic, p)
	if err != nil {
		return nil, fail(n.lg.WithField("partition", p), "lookup", err)
	}
	return child(ctx, n.EmbeddedInode(), name, syscall.S_IFDIR, out, func() gofs.InodeEmbedder {
		return &partNode{newFixedDir(pt)}
	}), 0
}

func (n *topicNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ents := []fuse.DirEntry{{Name: "config", Mode: syscall.S_IFREG}}
	ps, err := n.partitions()
	if err != nil {
		return nil, toErrno(err)
	}
	for _, i := range ps {
		ents = append(ents, fuse.DirEntry{Name: strconv.Itoa(i), Mode: syscall.S_IFDIR})
	}
	return gofs.NewListDirStream(ents), 0
}

// partitions are the topic's partition numbers that exist: those of a
// partlog.PartitionLister, else every one below the count.
func (n *topicNode) partitions() ([]int, error) {
	if pl, ok := n.fsys.opt.Store.(partlog.PartitionLister); ok {
		return pl.PartitionNumbers(n.topic)
	}
	count, err := n.fsys.opt.Store.Partitions(n.topic)
	if err != nil {
		return nil, err
	}
	ps := make([]int, count)
	for i := range ps {
		ps[i] = i
	}
	return ps, nil
}

func (n *topicNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	lg := n.lg.WithField("partition", name)
	defer guard(lg, "mkdir", &errno)
	if n.fsys.ro {
		return nil, fail(lg, "mkdir", partlog.ErrReadOnly)
	}
	p, ok := parsePartition(name)
	if !ok {
		return nil, fail(lg, "mkdir", fmt.Errorf("partition name %q: %w", name, partlog.ErrInvalid))
	}
	if err := n.fsys.opt.Store.AddPartition(n.topic, p); err != nil {
		return nil, fail(lg, "mkdir", err)
	}
	lg.Info("partition added")
	return n.partChild(ctx, name, p, out)
}

func (n *topicNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.fsys.refuse(n.lg.WithField("partition", name), "rmdir")
}

func (n *topicNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.fsys.refuse(n.lg.WithField("file", name), "unlink")
}

func (n *topicNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, n.fsys.refuse(n.lg.WithField("file", name), "create")
}
