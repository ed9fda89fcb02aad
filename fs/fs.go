package fs

import (
	"cmp"
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/internal/parallel"
	"github.com/partfs/partfs/keyindex"
	"github.com/partfs/partfs/metrics"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// KeyLookup answers @key/K reads: the latest record with a key
// (ok=false when none or tombstoned). keyindex.Index implements it.
type KeyLookup interface {
	Latest(key []byte) (rec record.Record, ok bool, err error)
}

// Options configure a filesystem.
type Options struct {
	Store   partlog.Store
	Logger  *logrus.Entry
	Now     func() time.Time
	Metrics *metrics.Metrics // may be nil
	// SaveInterval is how often a mount saves changed position sidecars
	// (default 60 s; negative: only at Close), so a crash costs little
	// recomputation at the next mount.
	SaveInterval time.Duration
	// KeyIndex returns the key lookup of a partition (default keyindex.New).
	KeyIndex func(partlog.Log) KeyLookup
	// Schemas decodes and encodes schema-encoded payloads (SPEC §11);
	// nil: keys and values are rendered as SPEC §3 says.
	Schemas Schemas
}

// FS is one mounted store.
type FS struct {
	opt   Options
	lg    *logrus.Entry
	ro    bool
	start time.Time

	mu    sync.Mutex
	parts map[partID]*part // REQUIRES: mu held

	stopSaver func() // stops the periodic sidecar saver (set by Mount)

	groups groupsView // .groups

	pt passthrough // of segments/ files

	noPageCache bool // MountOptions.NoPageCache, set before the mount serves
}

type partID struct {
	topic string
	n     int
}

// New returns the filesystem of opt.Store.
func New(opt Options) *FS {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.KeyIndex == nil {
		opt.KeyIndex = func(l partlog.Log) KeyLookup { return keyindex.New(l) }
	}
	if opt.Logger == nil {
		opt.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	f := &FS{opt: opt, lg: opt.Logger, ro: opt.Store.ReadOnly(), start: opt.Now(), parts: map[partID]*part{}}
	f.groups.f = f
	return f
}

// Root returns the root node for go-fuse.
func (f *FS) Root() gofs.InodeEmbedder { return &rootNode{dir{fsys: f, writable: true}} }

// MountOptions are the FUSE-level choices of a mount.
type MountOptions struct {
	AllowOther bool
	Debug      bool
	FsName     string
	// NoPassthrough serves every read of segments/ through the daemon,
	// as where the kernel refuses FUSE passthrough.
	NoPassthrough bool
	// NoPageCache reads log and log.jsonl with direct I/O on a read-only
	// mount too (a writable one always does): a first read of a large
	// log costs less, and a re-read as much as the first.
	NoPageCache bool
}

// Mount mounts f on dir: as root with mount(2) directly (no fusermount
// fallback), otherwise through fusermount3.
// maxRequest is the largest read or write request partfs asks the kernel
// for. go-fuse lowers it to what the kernel allows (max_pages_limit pages
// of /proc/sys/fs/fuse/max_pages_limit; 256 pages, 1 MiB, by default), so
// a write() larger than that reaches partfs in several requests.
const maxRequest = 8 << 20

func (f *FS) Mount(dir string, mo MountOptions) (*fuse.Server, error) {
	entry, attr, neg := time.Second, time.Duration(0), time.Duration(0)
	opts := &gofs.Options{
		EntryTimeout:    &entry,
		AttrTimeout:     &attr,
		NegativeTimeout: &neg,
		// files belong to the user who mounted; the kernel checks their
		// modes (default_permissions), also for others on --allow-other
		UID: uint32(os.Getuid()),
		GID: uint32(os.Getgid()),
		MountOptions: fuse.MountOptions{
			Options:       []string{"default_permissions"},
			AllowOther:    mo.AllowOther,
			Debug:         mo.Debug,
			FsName:        mo.FsName,
			Name:          "partfs",
			DisableXAttrs: true,
			// As root, mount(2) directly so a failure is not hidden by a
			// fallback; others go through fusermount3.
			DirectMountStrict: os.Geteuid() == 0,
			MaxWrite:          maxRequest,
			MaxReadAhead:      readAhead,
			// The kernel keeps a view's pages when its size grows;
			// viewCache drops what changed.
			ExplicitDataCacheControl: true,
			// Read-ahead requests one at a time, in order: a view's
			// handle renders ahead for a sequential reader, which
			// requests racing each other would defeat.
			DisabledCapabilities: fuse.CAP_ASYNC_READ,
		},
	}
	if f.ro {
		// The kernel then answers every change (even rm of a missing
		// name) with EROFS before asking us.
		opts.MountOptions.DirectMountFlags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_RDONLY
		opts.MountOptions.Options = append(opts.MountOptions.Options, "ro")
	}
	f.noPageCache = mo.NoPageCache
	srv, err := gofs.Mount(dir, f.Root(), opts)
	if err == nil {
		f.pt.probe(srv, mo.NoPassthrough, f.lg)
		raiseReadAhead(dir, f.lg)
	}
	if err == nil && !f.ro && f.opt.SaveInterval >= 0 {
		f.stopSaver = f.startSaver(cmp.Or(f.opt.SaveInterval, time.Minute))
	}
	return srv, err
}

// startSaver saves changed sidecars every interval until stopped.
func (f *FS) startSaver(interval time.Duration) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = f.saveAll()
			}
		}
	}()
	return func() { close(done); <-exited }
}

// Close saves every partition's position sidecar (not on a read-only
// mount). It does not close the store.
func (f *FS) Close() error {
	if f.stopSaver != nil {
		f.stopSaver()
		f.stopSaver = nil
	}
	if f.ro {
		return nil
	}
	return f.saveAll()
}

// bulkSaveFrom is how many changed position sidecars make saveAll sync
// the store's partitions at once (partlog.BulkSyncer) instead of each.
var bulkSaveFrom = 64

// saveAll saves every changed position sidecar, several partitions at
// once; it returns the first error. With bulkSaveFrom or more to save on
// a partlog.BulkSyncer, one SyncAll makes every log durable before the
// sidecars are written unsynced and one more makes those durable;
// otherwise each save syncs its own log and sidecar.
func (f *FS) saveAll() error {
	f.mu.Lock()
	var parts []*part
	for _, p := range f.parts {
		if p.ly.Dirty() {
			parts = append(parts, p)
		}
	}
	f.mu.Unlock()
	bulk, _ := f.opt.Store.(partlog.BulkSyncer)
	if len(parts) < bulkSaveFrom {
		bulk = nil
	} else if bulk != nil {
		if err := bulk.SyncAll(); err != nil {
			f.lg.WithError(err).Warn("syncing every partition at once failed: each position sidecar's save syncs its own log")
			bulk = nil
		}
	}
	var mu sync.Mutex
	var first error
	parallel.Each(len(parts), func(i int) {
		p := parts[i]
		save := p.ly.Save
		if bulk != nil {
			save = p.ly.SaveSynced
		}
		if err := save(); err != nil {
			p.lg.WithError(err).Warn("saving position sidecar failed")
			mu.Lock()
			first = cmp.Or(first, err)
			mu.Unlock()
		}
	})
	if bulk != nil {
		if err := bulk.SyncAll(); err != nil {
			f.lg.WithError(err).Warn("syncing the saved position sidecars failed")
			first = cmp.Or(first, err)
		}
	}
	return first
}

// part is the filesystem's state of one partition.
type part struct {
	fsys *FS
	log  partlog.Log
	ly   *position.Layout
	lg   *logrus.Entry

	keyOnce sync.Once
	keys    KeyLookup

	decodedOnce sync.Once
	dec         *decodedView // of an internal topic's partition
	schemas     *decoder     // nil: payloads rendered as docs/spec.md §3 alone

	firsts firsts // windows holding their lookup's first rendering
}

// in returns the partition and its layout for one request of the
// filesystem: bound to ctx and one deadline for all their calls where the
// Log is a partlog.Bounded (a cluster's), else p's own.
func (p *part) in(ctx context.Context) (partlog.Log, *position.Layout) {
	b, ok := p.log.(partlog.Bounded)
	if !ok {
		return p.log, p.ly
	}
	l := b.WithContext(ctx)
	return l, p.ly.With(l)
}

func (f *FS) part(topic string, n int) (*part, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := partID{topic, n}
	if p, ok := f.parts[id]; ok {
		return p, nil
	}
	l, err := f.opt.Store.Partition(topic, n)
	if err != nil {
		return nil, err
	}
	lg := f.lg.WithFields(logrus.Fields{"topic": topic, "partition": n})
	var dec *decoder
	if f.opt.Schemas != nil {
		dec = &decoder{s: f.opt.Schemas}
	}
	p := &part{fsys: f, log: l, lg: lg, schemas: dec}
	if dec != nil {
		p.ly = position.NewDecodingLayout(l, lg, dec)
	} else {
		p.ly = position.NewLayout(l, lg)
	}
	f.parts[id] = p
	return p, nil
}

func (p *part) keyLookup() KeyLookup {
	p.keyOnce.Do(func() {
		if p.fsys.opt.KeyIndex != nil {
			p.keys = p.fsys.opt.KeyIndex(p.log)
		}
	})
	return p.keys
}

// setTimes fills the times of an attribute.
func setTimes(out *fuse.Attr, t time.Time) {
	out.SetTimes(&t, &t, &t)
}

// dirAttr is the attribute of a directory: writable (0755) where names
// may be created or removed in it, else 0555; never writable on a
// read-only mount. The kernel checks these modes (default_permissions)
// at every step of a path; they never change during a mount, so the
// kernel keeps them dirAttrTimeout and does not ask again at each step.
func (f *FS) dirAttr(out *fuse.AttrOut, writable bool) {
	out.Mode = syscall.S_IFDIR | 0o555
	if writable && !f.ro {
		out.Mode = syscall.S_IFDIR | 0o755
	}
	out.Nlink = 2
	setTimes(&out.Attr, f.start)
	out.SetTimeout(dirAttrTimeout)
}

// dirAttrTimeout is how long the kernel keeps a directory's attributes.
const dirAttrTimeout = time.Minute

// fileMode returns mode for a writable file, or read-only on a ro mount.
func (f *FS) fileMode(writable bool) uint32 {
	if writable && !f.ro {
		return 0o644
	}
	return 0o444
}

// child returns the existing child name of parent, or adds one made by
// mk, with its attributes in out.
func child(ctx context.Context, parent *gofs.Inode, name string, mode uint32, out *fuse.EntryOut, mk func() gofs.InodeEmbedder) *gofs.Inode {
	ch := parent.GetChild(name)
	if ch == nil {
		ch = parent.NewInode(ctx, mk(), gofs.StableAttr{Mode: mode})
	}
	fillEntry(ctx, ch, out)
	return ch
}

// fillEntry puts the attributes of ch, and how long the kernel may keep
// them, into out.
func fillEntry(ctx context.Context, ch *gofs.Inode, out *fuse.EntryOut) {
	if ga, ok := ch.Operations().(gofs.NodeGetattrer); ok {
		var a fuse.AttrOut
		if ga.Getattr(ctx, nil, &a) == 0 {
			out.Attr = a.Attr
			out.SetAttrTimeout(a.Timeout())
		}
	}
}

// volatile makes the kernel forget an entry at once (resolved-at-lookup
// names such as @time/-10m, keys that may be removed).
func volatile(out *fuse.EntryOut) {
	out.SetEntryTimeout(time.Nanosecond)
}
