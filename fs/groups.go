package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// groupsName is the directory of the consumer groups (docs/spec.md §12).
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
	t      position.Tailer
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
			gp = &groupsPart{t: position.NewTailer(p.log)}
			v.parts[i] = gp
		}
		err := gp.t.Update(func() { gp.groups = internaltopic.Groups{} }, func(r *record.Record) {
			gp.groups.Apply(r.Key, r.Value)
		})
		errs = append(errs, err)
		out = append(out, &gp.groups)
	}
	return out, errors.Join(errs...)
}

// groupFileName reports whether group can be a file name of .groups.
func groupFileName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.Contains(n, "/")
}

// names lists the groups that can be file names: those of the store's
// group coordinator (a partlog.GroupStore), else those of its
// __consumer_offsets.
func (v *groupsView) names() ([]string, error) {
	var all []string
	var err error
	if gs, ok := v.f.opt.Store.(partlog.GroupStore); ok {
		all, err = gs.GroupNames()
	} else {
		v.mu.Lock()
		var folds []*internaltopic.Groups
		folds, err = v.update()
		for _, g := range folds {
			all = append(all, g.Names()...)
		}
		v.mu.Unlock()
	}
	var out []string
	for _, n := range all {
		if groupFileName(n) {
			out = append(out, n)
		}
	}
	return out, err
}

// group returns what describe needs of the group named name.
func (v *groupsView) group(name string) (*groupRows, error) {
	if gs, ok := v.f.opt.Store.(partlog.GroupStore); ok {
		g, err := gs.DescribeGroup(name)
		if err != nil {
			return nil, err
		}
		return v.rows(name, g), nil
	}
	v.mu.Lock()
	grp, err := v.folded(name)
	v.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return v.rows(name, grp), nil
}

// folded returns the group named name as __consumer_offsets describes it;
// partitions that cannot be read are logged and left out.
// REQUIRES: mu held.
func (v *groupsView) folded(name string) (partlog.Group, error) {
	all, err := v.update()
	v.reportUnreadable(err)
	for _, g := range all {
		if grp := g.Group(name); grp != nil {
			return groupOf(grp), nil
		}
	}
	return partlog.Group{}, partlog.ErrNotFound
}

// groupOf is grp as partlog describes a group.
func groupOf(grp *internaltopic.Group) partlog.Group {
	var g partlog.Group
	for tp, off := range grp.Offsets {
		g.Offsets = append(g.Offsets, partlog.GroupOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: off})
	}
	for _, m := range grp.Members {
		gm := partlog.GroupMember{ID: m.ID, ClientID: m.ClientID, Host: m.Host}
		for _, a := range m.Assigned {
			for _, p := range a.Partitions {
				gm.Assigned = append(gm.Assigned, partlog.GroupOffset{Topic: a.Topic, Partition: p})
			}
		}
		g.Members = append(g.Members, gm)
	}
	return g
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

// rows describes group name: per partition the committed offset, the log
// end offset where the partition is in this store (asked of it now), and
// the owner.
func (v *groupsView) rows(name string, g partlog.Group) *groupRows {
	type tp struct {
		topic string
		part  int32
	}
	rows := map[tp]*groupRow{}
	row := func(topic string, part int32) *groupRow {
		r := rows[tp{topic, part}]
		if r == nil {
			r = &groupRow{topic: topic, partition: part, current: -1, end: -1}
			rows[tp{topic, part}] = r
		}
		return r
	}
	for _, o := range g.Offsets {
		row(o.Topic, o.Partition).current = o.Offset
	}
	for _, m := range g.Members {
		for _, a := range m.Assigned {
			r := row(a.Topic, a.Partition)
			r.consumer, r.host, r.id = m.ID, m.Host, m.ClientID
		}
	}
	out := &groupRows{group: name}
	for _, r := range rows {
		if l, err := v.f.opt.Store.Partition(r.topic, int(r.partition)); err == nil {
			if end, err := l.OffsetForTime(partlog.Latest); err == nil {
				r.end = end
			}
		}
		out.rows = append(out.rows, *r)
	}
	slices.SortFunc(out.rows, func(a, b groupRow) int {
		return kafkaname.ComparePartitions(a.topic, a.partition, b.topic, b.partition)
	})
	return out
}

// commit resets group's offsets to what lines say (docs/spec.md §12): all
// or none, only while the group has no members.
func (v *groupsView) commit(group string, lines []byte) error {
	offs, err := v.resetOffsets(lines)
	if err != nil || len(offs) == 0 {
		return err
	}
	if gs, ok := v.f.opt.Store.(partlog.GroupStore); ok {
		return gs.CommitOffsets(group, offs)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	grp, err := v.folded(group)
	if err != nil && !errors.Is(err, partlog.ErrNotFound) {
		return err
	}
	if len(grp.Members) > 0 {
		return fmt.Errorf("group %s has %d active members: %w", group, len(grp.Members), partlog.ErrBusy)
	}
	n, err := v.f.opt.Store.Partitions(internaltopic.ConsumerOffsetsName)
	if err != nil {
		return fmt.Errorf("committing offsets of group %s: %s: %w", group, internaltopic.ConsumerOffsetsName, err)
	}
	p, err := v.f.opt.Store.Partition(internaltopic.ConsumerOffsetsName, internaltopic.GroupPartition(group, n))
	if err != nil {
		return err
	}
	now := v.f.opt.Now().UnixMilli()
	recs := make([]record.Record, len(offs))
	for i, o := range offs {
		recs[i].Key, recs[i].Value = internaltopic.OffsetCommitRecord(group, o.Topic, o.Partition, o.Offset, now)
		recs[i].Timestamp = now
	}
	_, err = p.Append(recs)
	return err
}

// resetOffsets reads lines `TOPIC PARTITION OFFSET|earliest|latest|@T`
// and resolves each to an offset as kafka-consumer-groups.sh
// --reset-offsets does: a number outside the log is moved to its nearest
// end; @T is the first offset at or after T (the end if none).
func (v *groupsView) resetOffsets(lines []byte) ([]partlog.GroupOffset, error) {
	var out []partlog.GroupOffset
	for i, line := range strings.Split(string(lines), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		bad := func(why string) error {
			return fmt.Errorf("line %d %q: %s: %w", i+1, line, why, partlog.ErrInvalid)
		}
		if len(f) != 3 {
			return nil, bad("want TOPIC PARTITION OFFSET|earliest|latest|@T")
		}
		part, err := parseDecimal(f[1])
		if err != nil || part > 1<<31-1 {
			return nil, bad("partition")
		}
		l, err := v.f.opt.Store.Partition(f[0], int(part))
		if err != nil {
			return nil, fmt.Errorf("line %d: %s partition %d: %w", i+1, f[0], part, err)
		}
		var off int64
		switch spec := f[2]; {
		case spec == "earliest":
			off, err = l.OffsetForTime(partlog.Earliest)
		case spec == "latest":
			off, err = l.OffsetForTime(partlog.Latest)
		case strings.HasPrefix(spec, "@"):
			var ts int64
			if ts, err = parseTime(spec[1:], v.f.opt.Now()); err != nil {
				return nil, bad(err.Error())
			}
			off, err = l.OffsetForTime(ts)
		default:
			if off, err = parseDecimal(spec); err != nil {
				return nil, bad("offset")
			}
			var first, end int64
			if first, err = l.OffsetForTime(partlog.Earliest); err == nil {
				end, err = l.OffsetForTime(partlog.Latest)
			}
			off = min(max(off, first), end)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, partlog.GroupOffset{Topic: f[0], Partition: int32(part), Offset: off})
	}
	return out, nil
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
type groupsDir struct{ dir }

func (d *groupsDir) Readdir(ctx context.Context) (_ gofs.DirStream, errno syscall.Errno) {
	lg := d.fsys.lg.WithField("file", groupsName)
	defer guard(lg, "readdir", &errno)
	names, err := d.fsys.groups.names()
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
	lg := d.fsys.lg.WithField("file", groupsName+"/"+name)
	defer guard(lg, "lookup", &errno)
	group, jsonl := name, false
	if _, err := d.fsys.groups.group(name); err != nil {
		g, ok := strings.CutSuffix(name, ".jsonl")
		if !ok {
			return nil, toErrno(err)
		}
		if _, err := d.fsys.groups.group(g); err != nil {
			return nil, toErrno(err)
		}
		group, jsonl = g, true
	}
	return child(ctx, d.EmbeddedInode(), name, syscall.S_IFREG, out, func() gofs.InodeEmbedder {
		return d.groupNode(group, jsonl, lg)
	}), 0
}

// Create makes the file of a group that has no committed offsets yet, so
// that `echo TOPIC PARTITION OFFSET > .groups/G` sets its first ones.
func (d *groupsDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (_ *gofs.Inode, _ gofs.FileHandle, _ uint32, errno syscall.Errno) {
	lg := d.fsys.lg.WithField("file", groupsName+"/"+name)
	defer guard(lg, "create", &errno)
	if d.fsys.ro {
		return nil, nil, 0, d.fsys.refuse(lg, "create")
	}
	if !groupFileName(name) || strings.HasSuffix(name, ".jsonl") {
		return nil, nil, 0, fail(lg, "create", fmt.Errorf("group name %q: %w", name, partlog.ErrInvalid))
	}
	n := d.groupNode(name, false, lg)
	ch := d.NewInode(ctx, n, gofs.StableAttr{Mode: syscall.S_IFREG})
	fh, fl, errno := n.Open(ctx, flags)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	fillEntry(ctx, ch, out)
	return ch, fh, fl, 0
}

// groupNode is the file of group: its describe rows (as JSON lines if
// jsonl), and, for the text file, resets written to it.
func (d *groupsDir) groupNode(group string, jsonl bool, lg *logrus.Entry) *contentNode {
	render := (*groupRows).text
	if jsonl {
		render = (*groupRows).jsonl
	}
	n := &contentNode{fsys: d.fsys, lg: lg, gen: func() ([]byte, error) {
		rows, err := d.fsys.groups.group(group)
		if errors.Is(err, partlog.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return render(rows), nil
	}}
	if !jsonl {
		n.apply = func(lines []byte) error {
			if err := d.fsys.groups.commit(group, lines); err != nil {
				return err
			}
			lg.WithField("offsets", strings.TrimSpace(string(lines))).Info("consumer group offsets reset")
			return nil
		}
	}
	return n
}
