package fs

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/partlog"
)

// contentNode is a small generated file (config, stat, .metrics). If
// apply is set, writes are taken line by line: each write() applies its
// complete lines (all or none); a partial line waits for close.
type contentNode struct {
	gofs.Inode
	fsys  *FS
	lg    *logrus.Entry
	gen   func() ([]byte, error)
	apply func(lines []byte) error
	sync  func() error // fsync: make the partition durable (nil: nothing to do)
	// live content only grows: an open file's stat and a read past what it
	// has render it again, so `tail -f` follows it.
	live bool
	// whole: apply takes everything one open wrote, at close (a schema
	// text), not line by line
	whole bool

	mu   sync.Mutex
	last snapshot // REQUIRES: mu held; the latest rendering
}

// snapshot is one rendering of a content file and the time it first read
// so: a stat between two renderings that agree sees the same size and
// times, so tar finds a quiet topic's stat and config unchanged.
type snapshot struct {
	data []byte
	t    time.Time
}

// render returns the current content, keeping the time of the previous
// rendering when the bytes did not change.
func (n *contentNode) render() (snapshot, error) {
	b, err := n.gen()
	if err != nil {
		return snapshot{}, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last.t.IsZero() || !bytes.Equal(b, n.last.data) {
		n.last = snapshot{data: b, t: n.fsys.opt.Now()}
	}
	return n.last, nil
}

// configText renders kvs as `key=value` lines, then a comment line per
// source naming the keys whose values come from it (a write of the file
// back skips comments).
func configText(kvs []partlog.KV) []byte {
	pairs := make([][2]string, len(kvs))
	var sources []string
	bySource := map[string][]string{}
	for i, kv := range kvs {
		pairs[i] = [2]string{kv.Key, kv.Value}
		if kv.Source == "" {
			continue
		}
		if bySource[kv.Source] == nil {
			sources = append(sources, kv.Source)
		}
		bySource[kv.Source] = append(bySource[kv.Source], kv.Key)
	}
	b := []byte(config.FormatLines(pairs))
	for _, src := range sources {
		b = fmt.Appendf(b, "# %s: %s\n", src, strings.Join(bySource[src], " "))
	}
	return b
}

func newConfigNode(f *FS, topic string, lg *logrus.Entry) *contentNode {
	return &contentNode{fsys: f, lg: lg,
		gen: func() ([]byte, error) {
			kvs, err := f.opt.Store.TopicConfig(topic)
			if err != nil {
				return nil, err
			}
			return configText(kvs), nil
		},
		apply: func(lines []byte) error {
			pairs, err := config.ParseLines(string(lines))
			if err != nil || len(pairs) == 0 {
				return err
			}
			kvs := make([]partlog.KV, len(pairs))
			for i, p := range pairs {
				kvs[i] = partlog.KV{Key: p[0], Value: p[1]}
			}
			if err := f.opt.Store.SetTopicConfig(topic, kvs); err != nil {
				return err
			}
			changes := make([]string, len(kvs))
			for i, kv := range kvs {
				changes[i] = kv.Key + "=" + kv.Value
			}
			lg.WithField("changes", strings.Join(changes, " ")).Info("topic configuration changed")
			return nil
		},
	}
}

// Getattr through an open file gives the size of what that open reads;
// otherwise the size of the content now. The file takes no blocks (du).
func (n *contentNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	defer guard(n.lg, "getattr", &errno)
	var snap snapshot
	var err error
	if h, ok := fh.(*contentHandle); ok {
		snap, err = h.current(0)
	} else {
		snap, err = n.render()
	}
	if err != nil {
		return fail(n.lg, "getattr", err)
	}
	out.Mode = syscall.S_IFREG | n.fsys.fileMode(n.apply != nil)
	out.Size = uint64(len(snap.data))
	out.Nlink = 1
	out.Blksize, out.Blocks = smallBlksize, 0
	setTimes(&out.Attr, snap.t)
	return 0
}

func (n *contentNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if _, ok := in.GetSize(); ok && (n.apply == nil || n.fsys.ro) {
		return n.fsys.refuse(n.lg, "truncate")
	}
	return n.Getattr(ctx, fh, out)
}

func (n *contentNode) Open(ctx context.Context, flags uint32) (_ gofs.FileHandle, _ uint32, errno syscall.Errno) {
	defer guard(n.lg, "open", &errno)
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		if n.apply == nil || n.fsys.ro {
			return nil, 0, n.fsys.refuse(n.lg, "open")
		}
	}
	snap, err := n.render()
	if err != nil {
		return nil, 0, fail(n.lg, "open", err)
	}
	return &contentHandle{n: n, snap: snap}, fuse.FOPEN_DIRECT_IO, 0
}

// contentHandle serves the content rendered at open; fstat of it gives
// that content's size.
type contentHandle struct {
	n       *contentNode
	snap    snapshot
	mu      sync.Mutex
	partial []byte
}

func (h *contentHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.n.Getattr(ctx, h, out)
}

// Fsync makes the partition durable (stat); config changes are durable
// when applied.
func (h *contentHandle) Fsync(ctx context.Context, flags uint32) (errno syscall.Errno) {
	defer guard(h.n.lg, "fsync", &errno)
	if h.n.sync == nil {
		return 0
	}
	if err := h.n.sync(); err != nil {
		return fail(h.n.lg, "fsync", err)
	}
	return 0
}

// current returns what the open file reads: for live content wanting
// bytes up to end (0: any), rendered again when it holds fewer.
func (h *contentHandle) current(end int64) (snapshot, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n.live && (end == 0 || end > int64(len(h.snap.data))) {
		snap, err := h.n.render()
		if err != nil {
			return snapshot{}, err
		}
		h.snap = snap
	}
	return h.snap, nil
}

func (h *contentHandle) Read(ctx context.Context, dest []byte, off int64) (_ fuse.ReadResult, errno syscall.Errno) {
	defer guard(h.n.lg, "read", &errno)
	snap, err := h.current(off + int64(len(dest)))
	if err != nil {
		return nil, fail(h.n.lg, "read", err)
	}
	data := snap.data
	if off >= int64(len(data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(data[off:min(off+int64(len(dest)), int64(len(data)))]), 0
}

// maxConfigLine bounds an unfinished line of a writable content file
// (config): a write that leaves a longer one fails whole with EFBIG and
// drops it.
const maxConfigLine = 64 << 10

// maxWhole bounds what one open of a whole-content file takes.
const maxWhole = 4 << 20

func (h *contentHandle) Write(ctx context.Context, data []byte, off int64) (_ uint32, errno syscall.Errno) {
	defer guard(h.n.lg, "write", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n.whole {
		if len(h.partial)+len(data) > maxWhole {
			h.partial = nil
			return 0, fail(h.n.lg, "write", fmt.Errorf("more than %d bytes: %w", maxWhole, partlog.ErrTooLarge))
		}
		h.partial = append(h.partial, data...)
		return uint32(len(data)), 0
	}
	rest := len(h.partial) + len(data)
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		rest = len(data) - i - 1
	}
	if rest > maxConfigLine {
		h.partial = nil
		return 0, fail(h.n.lg, "write", fmt.Errorf("a line of more than %d bytes: %w", maxConfigLine, partlog.ErrTooLarge))
	}
	buf := append(append([]byte(nil), h.partial...), data...)
	i := bytes.LastIndexByte(buf, '\n')
	if i >= 0 {
		if err := h.n.apply(buf[:i+1]); err != nil {
			return 0, fail(h.n.lg, "write", err)
		}
	}
	h.partial = buf[i+1:]
	return uint32(len(data)), 0
}

func (h *contentHandle) Flush(ctx context.Context) (errno syscall.Errno) {
	defer guard(h.n.lg, "flush", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.partial) == 0 {
		return 0
	}
	line := h.partial
	h.partial = nil
	if err := h.n.apply(line); err != nil {
		return fail(h.n.lg, "flush", err)
	}
	return 0
}

// statText renders docs/spec.md §5.
func (p *part) statText() ([]byte, error) {
	st := p.log.Stats()
	var b bytes.Buffer
	line := func(k string, v any) { fmt.Fprintf(&b, "%s: %v\n", k, v) }
	line("log_start_offset", st.LogStartOffset)
	line("log_end_offset", st.LogEndOffset)
	line("records", st.Records)
	if st.RecordsBound {
		line("records_exact", false) // Records is an upper bound
	}
	line("segments", st.Segments)
	line("size_bytes", st.SizeBytes)
	line("first_timestamp_ms", st.FirstTimestampMs)
	line("max_timestamp_ms", st.MaxTimestampMs)
	line("recovery_point", st.RecoveryPoint)
	line("cleaner_checkpoint", st.CleanerCheckpoint)
	line("dirty_ratio", strconv.FormatFloat(st.DirtyRatio, 'f', 4, 64))
	line("cleanup_policy", st.CleanupPolicy)
	line("compression_type", st.CompressionType)
	var gap int64
	exact := true
	err := p.ly.WithSync(func() (err error) {
		gap, exact, err = p.ly.Gaps(position.Plain)
		return err
	})
	if err != nil {
		// a partition whose reads fail (damaged data, EIO) still shows
		// its offsets; only the gaps, which need its renderings, are unknown
		p.lg.WithError(err).WithField("file", "stat").Warn("gap_bytes unknown: the partition's records could not be read")
		line("gap_bytes_exact", false)
		return b.Bytes(), nil
	}
	line("gap_bytes", gap) // of log: bytes st_size counts that no record fills
	if !exact {
		line("gap_bytes_exact", false)
	}
	return b.Bytes(), nil
}
