package salvage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/progress"
	"github.com/partfs/partfs/vfs"
)

// Skip is one region of a source segment that salvage did not keep.
type Skip struct {
	File      string // the source segment
	From, To  int64  // byte positions [From, To)
	FirstLost int64  // the first offset not kept
	NextKept  int64  // the offset of the next batch kept, -1 if none followed
	Reason    string // why the batch at From was refused
}

func (s Skip) String() string {
	lost := fmt.Sprintf("offsets %d-%d lost", s.FirstLost, s.NextKept-1)
	switch {
	case s.NextKept < 0:
		lost = fmt.Sprintf("offsets from %d on lost", s.FirstLost)
	case s.NextKept <= s.FirstLost:
		lost = "no offsets lost"
	}
	return fmt.Sprintf("%s: skipped positions %d-%d (%d bytes), %s: %s", s.File, s.From, s.To, s.To-s.From, lost, s.Reason)
}

// Result sums up a salvage.
type Result struct {
	Partitions, Segments, Batches, Records int
	Skips                                  []Skip
}

// Options of a salvage.
type Options struct {
	Partitions []string      // "<topic>-<n>" to copy; all when empty
	Report     io.Writer     // each skipped region as it is found (nil: none)
	Progress   io.Writer     // progress of the bytes read (nil: none)
	Logger     *logrus.Entry // the destination's logstore (nil: discarded)
}

// Run copies src's partitions to dst, which must not exist or be empty.
func Run(src, dst string, opt Options) (Result, error) {
	var res Result
	parts, total, err := partitions(src, opt.Partitions)
	if err != nil {
		return res, err
	}
	if err := emptyDir(dst); err != nil {
		return res, err
	}
	var pr *progress.Reporter
	if opt.Progress != nil {
		pr = progress.Start(opt.Progress, "salvage", total, progress.Options{})
	}
	for _, p := range parts {
		if err := copyPartition(src, dst, p, &res, opt, pr); err != nil {
			if pr != nil {
				pr.Stop()
			}
			return res, err
		}
		res.Partitions++
	}
	if pr != nil {
		pr.Done(fmt.Sprintf("%d partitions, %d batches kept, %d regions skipped", res.Partitions, res.Batches, len(res.Skips)))
	}
	for _, name := range []string{kafkaname.MetaPropertiesFile, logstore.TopicsFile} {
		if err := copyRegular(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return res, err
		}
	}
	return res, rebuild(dst, opt.Logger)
}

// partitions lists the partition directories of src to copy and the bytes
// of their segments.
func partitions(src string, want []string) ([]string, int64, error) {
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, 0, err
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	var out []string
	var total int64
	for _, e := range ents {
		if !e.IsDir() || !isPartitionDir(e.Name()) || len(want) > 0 && !wanted[e.Name()] {
			continue
		}
		delete(wanted, e.Name())
		out = append(out, e.Name())
		segs, _ := segments(filepath.Join(src, e.Name()))
		for _, s := range segs {
			total += s.size
		}
	}
	for w := range wanted {
		return nil, 0, fmt.Errorf("partition %s: not in %s", w, src)
	}
	sort.Strings(out)
	return out, total, nil
}

// isPartitionDir matches the directories the store opens as partitions.
func isPartitionDir(name string) bool {
	_, _, ok := kafkaname.ParsePartitionDir(name)
	return ok
}

func emptyDir(dst string) error {
	ents, err := os.ReadDir(dst)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dst, 0o755)
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty", dst)
	}
	return nil
}

type segFile struct {
	base   int64
	path   string
	size   int64
	refuse string // why the file is not read (not a regular file), "" when it is
}

// segments lists a partition directory's .log files by base offset
// (logstore.ListKafkaFiles); a name that is not a regular file (a symbolic
// link) is listed to be reported, never read.
func segments(dir string) ([]segFile, error) {
	files, refused, err := logstore.ListKafkaFiles(vfs.Default, dir)
	if err != nil {
		return nil, err
	}
	var out []segFile
	for _, f := range files {
		if f.Kind == kafkaname.LogSuffix {
			out = append(out, segFile{base: f.Base, path: filepath.Join(dir, f.Name()), size: f.Size()})
		}
	}
	for _, f := range refused {
		if f.Kind == kafkaname.LogSuffix {
			why := fmt.Sprintf("not a regular file (%s): not followed, nothing of it copied", f.Mode().Type())
			out = append(out, segFile{base: f.Base, path: filepath.Join(dir, f.Name()), refuse: why})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].base < out[j].base })
	return out, nil
}

// copyRegular copies a regular file (not a link) if it exists.
func copyRegular(from, to string) error {
	fi, err := os.Lstat(from)
	if errors.Is(err, os.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
		return nil
	}
	if err != nil {
		return err
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// rebuild opens dst with logstore (no checkpoints: recovery from offset 0
// checks every batch and rebuilds the indexes) and closes it cleanly.
func rebuild(dst string, lg *logrus.Entry) error {
	if lg == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		lg = logrus.NewEntry(l)
	}
	st, err := logstore.Open(dst, logstore.Options{Logger: lg, NoBackground: true})
	if err != nil {
		return fmt.Errorf("open the salvaged copy: %w", err)
	}
	return st.Close()
}

// fits reports whether a batch of offsets [base, last] belongs in a
// segment at segBase whose next segment starts at next (-1: last segment).
func fits(base, last, segBase, next int64) bool {
	return base >= segBase && index.Indexable(segBase, last) && (next < 0 || last < next)
}
