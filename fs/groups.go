package fs

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// groupsName is the directory of the consumer groups found in
// __consumer_offsets.
const groupsName = ".groups"

// groupsView folds every partition of __consumer_offsets into its groups
// (a group lives in one partition), reading only what arrived since the
// last look.
type groupsView struct {
	f     *FS
	mu    sync.Mutex
	parts map[int]*groupsPart // REQUIRES: mu held
	// unreadable is the last failure of update reportUnreadable logged
	unreadable string
}

type groupsPart struct {
	t      tailer
	groups internaltopic.Groups
}

// update brings every partition's fold up to date and returns them.
// REQUIRES: mu held.
func (v *groupsView) update() ([]*internaltopic.Groups, error) {
	n, err := v.f.opt.Store.Partitions(internaltopic.ConsumerOffsetsName)
	if errors.Is(err, partlog.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if v.parts == nil {
		v.parts = map[int]*groupsPart{}
	}
	var out []*internaltopic.Groups
	var errs []error
	for i := range n {
		gp := v.parts[i]
		if gp == nil {
			p, err := v.f.part(internaltopic.ConsumerOffsetsName, i)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			gp = &groupsPart{t: tailer{log: p.log}}
			v.parts[i] = gp
		}
		err := gp.t.update(func() { gp.groups = internaltopic.Groups{} }, func(r *record.Record) {
			gp.groups.Apply(r.Key, r.Value)
		})
		errs = append(errs, err)
		out = append(out, &gp.groups)
	}
	return out, errors.Join(errs...)
}

// names lists the groups that can be file names.
func (v *groupsView) names() ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	all, err := v.update()
	var out []string
	for _, g := range all {
		for _, n := range g.Names() {
			if n != "" && n != "." && n != ".." && !strings.Contains(n, "/") {
				out = append(out, n)
			}
		}
	}
	return out, err
}

// group returns a copy of what describe needs of the group named name.
func (v *groupsView) group(name string) (*groupRows, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	all, err := v.update()
	v.reportUnreadable(err)
	for _, g := range all {
		if grp := g.Group(name); grp != nil {
			return v.rows(grp), nil
		}
	}
	return nil, partlog.ErrNotFound
}

// reportUnreadable logs the partitions of __consumer_offsets that update
// could not read (their groups are left out, the others are served), once
// per change of what failed. REQUIRES: mu held.
func (v *groupsView) reportUnreadable(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != v.unreadable && msg != "" {
		v.f.lg.WithField("file", groupsName).WithError(err).
			Warn("consumer offsets partitions unreadable: the groups stored there are left out")
	}
	v.unreadable = msg
}

// groupRow is one line of kafka-consumer-groups.sh --describe.
type groupRow struct {
	topic              string
	partition          int32
	current, end       int64 // -1: none
	consumer, host, id string
}

type groupRows struct {
	group string
	rows  []groupRow
}

// rows describes grp: per partition the committed offset, the log end
// offset where the partition is in this store, and the owner.
// REQUIRES: mu held.
func (v *groupsView) rows(grp *internaltopic.Group) *groupRows {
	out := &groupRows{group: grp.Name}
	for _, tp := range grp.Partitions() {
		row := groupRow{topic: tp.Topic, partition: tp.Partition, current: -1, end: -1}
		if off, ok := grp.Offsets[tp]; ok {
			row.current = off
		}
		if l, err := v.f.opt.Store.Partition(tp.Topic, int(tp.Partition)); err == nil {
			row.end = l.EndOffset()
		}
		if m := grp.Owner(tp); m != nil {
			row.consumer, row.host, row.id = m.ID, m.Host, m.ClientID
		}
		out.rows = append(out.rows, row)
	}
	return out
}

func dash(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (r groupRow) lag() int64 {
	if r.current < 0 || r.end < 0 {
		return -1
	}
	return max(r.end-r.current, 0)
}

// text renders the rows as kafka-consumer-groups.sh --describe does.
func (g *groupRows) text() []byte {
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 8, 1, ' ', 0)
	w.Write([]byte("GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tHOST\tCLIENT-ID\n"))
	for _, r := range g.rows {
		w.Write([]byte(strings.Join([]string{g.group, r.topic, strconv.Itoa(int(r.partition)), dash(r.current),
			dash(r.end), dash(r.lag()), orDash(r.consumer), orDash(r.host), orDash(r.id)}, "\t") + "\n"))
	}
	w.Flush()
	return b.Bytes()
}

// jsonl renders one object per row; unknown figures are null.
func (g *groupRows) jsonl() []byte {
	var b []byte
	num := func(n int64) any {
		if n < 0 {
			return nil
		}
		return n
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	for _, r := range g.rows {
		o := internaltopic.Object{{Name: "group", Value: g.group}, {Name: "topic", Value: r.topic},
			{Name: "partition", Value: r.partition}, {Name: "current_offset", Value: num(r.current)},
			{Name: "log_end_offset", Value: num(r.end)}, {Name: "lag", Value: num(r.lag())},
			{Name: "consumer_id", Value: str(r.consumer)}, {Name: "host", Value: str(r.host)},
			{Name: "client_id", Value: str(r.id)}}
		b = append(internaltopic.AppendValue(b, o), '\n')
	}
	return b
}

// groupsDir is MOUNTPOINT/.groups: a file per group (and a .jsonl twin).
type groupsDir struct {
	gofs.Inode
	f *FS
}

var (
	_ = (gofs.NodeLookuper)((*groupsDir)(nil))
	_ = (gofs.NodeReaddirer)((*groupsDir)(nil))
	_ = (gofs.NodeGetattrer)((*groupsDir)(nil))
)

func (d *groupsDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.f.dirAttr(out, false)
	return 0
}

func (d *groupsDir) Readdir(ctx context.Context) (_ gofs.DirStream, errno syscall.Errno) {
	lg := d.f.lg.WithField("file", groupsName)
	defer guard(lg, "readdir", &errno)
	names, err := d.f.groups.names()
	if err != nil {
		lg.WithError(err).Warn("reading consumer groups")
	}
	var ents []fuse.DirEntry
	for _, n := range names {
		ents = append(ents, fuse.DirEntry{Name: n, Mode: syscall.S_IFREG}, fuse.DirEntry{Name: n + ".jsonl", Mode: syscall.S_IFREG})
	}
	return gofs.NewListDirStream(ents), 0
}

func (d *groupsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *gofs.Inode, errno syscall.Errno) {
	lg := d.f.lg.WithField("file", groupsName+"/"+name)
	defer guard(lg, "lookup", &errno)
	group, render := name, (*groupRows).text
	if _, err := d.f.groups.group(name); err != nil {
		g, ok := strings.CutSuffix(name, ".jsonl")
		if !ok {
			return nil, toErrno(err)
		}
		if _, err := d.f.groups.group(g); err != nil {
			return nil, toErrno(err)
		}
		group, render = g, (*groupRows).jsonl
	}
	gen := func() ([]byte, error) {
		rows, err := d.f.groups.group(group)
		if errors.Is(err, partlog.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return render(rows), nil
	}
	return child(ctx, d.EmbeddedInode(), name, syscall.S_IFREG, out, func() gofs.InodeEmbedder {
		return &contentNode{fsys: d.f, lg: lg, gen: gen}
	}), 0
}
