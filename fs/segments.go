package fs

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/partlog"
)

// segmentsDir is segments/: the Kafka files of a partition whose Log is a
// partlog.SegmentFiler, as they are, read-only.
type segmentsDir struct {
	fixedDir
	files partlog.SegmentFiler
}

// segmentFiler returns the partition's SegmentFiler, if its Log is one.
func (p *part) segmentFiler() (partlog.SegmentFiler, bool) {
	sf, ok := p.log.(partlog.SegmentFiler)
	return sf, ok
}

func (d *segmentsDir) Readdir(ctx context.Context) (_ gofs.DirStream, errno syscall.Errno) {
	defer guard(d.p.lg.WithField("file", "segments"), "readdir", &errno)
	fis, err := d.files.SegmentFiles()
	if err != nil {
		return nil, fail(d.p.lg.WithField("file", "segments"), "readdir", err)
	}
	ents := make([]fuse.DirEntry, len(fis))
	for i, fi := range fis {
		ents[i] = fuse.DirEntry{Name: fi.Name, Mode: syscall.S_IFREG}
	}
	return gofs.NewListDirStream(ents), 0
}

func (d *segmentsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	lg := d.p.lg.WithField("file", "segments/"+name)
	defer guard(lg, "lookup", &errno)
	fi, err := d.files.StatSegmentFile(name)
	if errors.Is(err, partlog.ErrNotFound) {
		return nil, syscall.ENOENT
	}
	if err != nil {
		return nil, fail(lg, "lookup", err)
	}
	// A name looked up again is the same inode while the same file is
	// behind it (cp checks that a file it copies was not replaced); a
	// file that replaced it (a compaction swap) is a new inode, so the
	// kernel never reads it through the old file's passthrough. The node
	// reaches its file by name.
	ch := d.GetChild(name)
	if rf, ok := opsOf(ch).(*rawFile); !ok || rf.id != fi.ID {
		ch = d.NewInode(ctx, &rawFile{p: d.p, files: d.files, name: name, id: fi.ID}, gofs.StableAttr{Mode: syscall.S_IFREG})
	}
	fileAttr(&out.Attr, fi)
	volatile(out)
	return ch, 0
}

// fileAttr fills a read-only file's attributes from fi.
func fileAttr(out *fuse.Attr, fi partlog.FileInfo) {
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = uint64(fi.Size)
	out.Blocks = uint64(fi.Blocks)
	out.Blksize = smallBlksize // set, so that go-fuse keeps Blocks instead of deriving it from Size
	out.Nlink = 1
	setTimes(out, fi.ModTime)
}

// opsOf is the node of ch, nil for none.
func opsOf(ch *gofs.Inode) gofs.InodeEmbedder {
	if ch == nil {
		return nil
	}
	return ch.Operations()
}

// rawFile is one Kafka file of the partition, read-only.
type rawFile struct {
	gofs.Inode
	p     *part
	files partlog.SegmentFiler
	name  string
	id    uint64 // partlog.FileInfo.ID of the file at lookup
}

func (f *rawFile) lg() *logrus.Entry { return f.p.lg.WithField("file", "segments/"+f.name) }

func (f *rawFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	lg := f.lg()
	defer guard(lg, "getattr", &errno)
	fi, err := f.files.StatSegmentFile(f.name)
	if err != nil {
		return fail(lg, "getattr", err)
	}
	fileAttr(&out.Attr, fi)
	return 0
}

func (f *rawFile) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return f.p.fsys.refuse(f.lg(), "setattr")
}

func (f *rawFile) Open(ctx context.Context, flags uint32) (_ gofs.FileHandle, _ uint32, errno syscall.Errno) {
	lg := f.lg()
	defer guard(lg, "open", &errno)
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		return nil, 0, f.p.fsys.refuse(lg, "open")
	}
	sf, err := f.files.OpenSegmentFile(f.name)
	if err != nil {
		return nil, 0, fail(lg, "open", err)
	}
	h := &rawHandle{f: sf, lg: lg, fsys: f.p.fsys}
	if h.kf = f.p.fsys.pt.file(sf, lg); h.kf != nil {
		if !f.same(h.kf) {
			// The name holds another file since this inode was
			// looked up (within the kernel's entry timeout): go-fuse
			// would hand the kernel this inode's earlier file. ESTALE
			// makes the kernel look the name up again and retry.
			h.Release(ctx)
			lg.Debug("open of a replaced segment file: ESTALE for a new lookup")
			return nil, 0, syscall.ESTALE
		}
		// No FOPEN_DIRECT_IO: it would override passthrough.
		return h, 0, 0
	}
	return h, fuse.FOPEN_DIRECT_IO, 0
}

// same reports whether kf is the file this inode was looked up for
// (partlog.FileInfo.ID, the inode number; true when unknown).
func (f *rawFile) same(kf *os.File) bool {
	fi, err := kf.Stat()
	if err != nil || f.id == 0 {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Ino == f.id
}

// rawHandle reads an open Kafka file: the kernel reads kf itself where it
// takes it (passthrough); otherwise reads come here.
type rawHandle struct {
	f    partlog.SegmentFile
	kf   *os.File // for passthrough, nil if none
	lg   *logrus.Entry
	fsys *FS
}

// PassthroughFd gives go-fuse the descriptor to register with the kernel
// (called once, during Open).
func (h *rawHandle) PassthroughFd() (int, bool) {
	if h.kf == nil {
		return 0, false
	}
	return int(h.kf.Fd()), true
}

func (h *rawHandle) Read(ctx context.Context, dest []byte, off int64) (_ fuse.ReadResult, errno syscall.Errno) {
	defer h.fsys.observe("read", time.Now(), &errno)
	defer guard(h.lg, "read", &errno)
	if h.kf != nil {
		h.fsys.pt.readRefused(h.lg)
	}
	n, err := h.f.ReadAt(dest, off)
	if n < len(dest) && err != nil && err != io.EOF {
		return nil, fail(h.lg, "read", err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *rawHandle) Release(ctx context.Context) syscall.Errno {
	if h.kf != nil {
		h.kf.Close() // the kernel holds its own reference
	}
	if err := h.f.Close(); err != nil {
		return fail(h.lg, "release", err)
	}
	return 0
}
