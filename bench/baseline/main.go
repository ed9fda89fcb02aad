// Command baseline is the FUSE ceiling partfs is measured against: one
// go-fuse file that appends every incoming write to a backing file and
// serves reads from it, every request through the daemon (no passthrough,
// no page cache: direct_io, as partfs's writes and first reads; xattrs
// off).
//
//	baseline [-entry-timeout D] BACKINGFILE MOUNTPOINT   serves MOUNTPOINT/file until SIGTERM/SIGINT
//	baseline -dir DIR MOUNTPOINT                         serves DIR's tree (go-fuse's loopback), the
//	                                                     reference for mounting and stopping a tree
//
// -entry-timeout is how long the kernel keeps the name "file" (go-fuse's
// default when unset); 0 makes every open look it up, as partfs's
// @offset/N and @time/T names are.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

type root struct{ gofs.Inode }

type file struct {
	gofs.Inode
	f *os.File
}

var (
	_ = (gofs.NodeOnAdder)((*root)(nil))
	_ = (gofs.NodeOpener)((*file)(nil))
	_ = (gofs.NodeReader)((*file)(nil))
	_ = (gofs.NodeWriter)((*file)(nil))
	_ = (gofs.NodeGetattrer)((*file)(nil))
	_ = (gofs.NodeSetattrer)((*file)(nil))
)

var backing *os.File

func (r *root) OnAdd(ctx context.Context) {
	ch := r.NewPersistentInode(ctx, &file{f: backing}, gofs.StableAttr{Mode: syscall.S_IFREG})
	r.AddChild("file", ch, false)
}

func (n *file) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (n *file) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	k, err := n.f.ReadAt(dest, off)
	if k == 0 && err != nil {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *file) Write(ctx context.Context, fh gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	k, err := n.f.Write(data) // O_APPEND: the offset is ignored, as in partfs
	if err != nil {
		return 0, gofs.ToErrno(err)
	}
	return uint32(k), 0
}

func (n *file) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	st, err := n.f.Stat()
	if err != nil {
		return gofs.ToErrno(err)
	}
	out.Mode, out.Size = syscall.S_IFREG|0o644, uint64(st.Size())
	// partfs's st_blksize for log: cat then moves 1 MiB per read and
	// write, one FUSE request each, on both mounts (with go-fuse's 4 KiB,
	// 128 KiB)
	out.Blksize = 1 << 20
	return 0
}

func (n *file) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return n.Getattr(ctx, fh, out)
}

func main() {
	entry := flag.Duration("entry-timeout", -1, "kernel entry timeout of the file's name (negative: go-fuse's default)")
	tree := flag.Bool("dir", false, "serve the directory BACKING's tree instead of one file")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: baseline [-entry-timeout D] BACKINGFILE MOUNTPOINT | baseline -dir DIR MOUNTPOINT")
		os.Exit(2)
	}
	if *tree {
		serveTree(flag.Arg(0), flag.Arg(1))
		return
	}
	var err error
	backing, err = os.OpenFile(flag.Arg(0), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zero := time.Duration(0)
	// The FUSE options of partfs's mount (fs.FS.Mount): the same request
	// size asked for (8 MiB, which go-fuse lowers to what the kernel
	// allows, max_pages_limit pages: 1 MiB by default), read-ahead and
	// capabilities. Replies are written from memory, as partfs's are (a
	// 1 MiB reply does not fit go-fuse's splice pipe).
	opts := &gofs.Options{AttrTimeout: &zero, MountOptions: fuse.MountOptions{
		Options: []string{"default_permissions"}, DisableXAttrs: true, DirectMountStrict: true,
		MaxWrite: 8 << 20, MaxReadAhead: 1 << 20, ExplicitDataCacheControl: true,
		DisabledCapabilities: fuse.CAP_ASYNC_READ, DisableSplice: true, Name: "baseline"}}
	if *entry >= 0 {
		opts.EntryTimeout = entry
	}
	srv, err := gofs.Mount(flag.Arg(1), &root{}, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	waitSignal(srv)
}

// serveTree serves dir's tree on mnt with go-fuse's loopback until
// SIGTERM/SIGINT.
func serveTree(dir, mnt string) {
	lb, err := gofs.NewLoopbackRoot(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv, err := gofs.Mount(mnt, lb, &gofs.Options{MountOptions: fuse.MountOptions{
		Options: []string{"default_permissions"}, DisableXAttrs: true, DirectMountStrict: true, Name: "baseline"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	waitSignal(srv)
}

// waitSignal unmounts srv at SIGTERM or SIGINT and returns once it is
// unmounted.
func waitSignal(srv *fuse.Server) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-sig; _ = srv.Unmount() }()
	srv.Wait()
}
