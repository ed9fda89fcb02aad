package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

var _ partlog.SegmentFiler = (*Log)(nil)

// parseKafkaName parses name if it is one of Kafka's own files of a
// partition directory (kafka-format.md §4–5): a segment file named by its
// base offset of at least 20 digits, possibly with an operation suffix
// (kind is what follows the offset, e.g. ".log" or ".index.swap"), or one
// of the partition's metadata files (base -1, kind the name).
func parseKafkaName(name string) (base int64, kind string, ok bool) {
	if name == kafkaname.LeaderEpochFile || name == kafkaname.PartitionMetadataFile {
		return -1, name, true
	}
	i := strings.IndexByte(name, '.')
	if i < 20 || strings.Trim(name[:i], "0123456789") != "" {
		return 0, "", false
	}
	rest := name[i:]
	for _, op := range []string{kafkaname.DeletedSuffix, kafkaname.CleanedSuffix, kafkaname.SwapSuffix} {
		rest = strings.TrimSuffix(rest, op)
	}
	switch rest {
	case kafkaname.LogSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix, kafkaname.TxnIndexSuffix, kafkaname.SnapshotSuffix:
	default:
		return 0, "", false
	}
	base, ok = kafkaname.ParseBase(name)
	return base, name[i:], ok
}

// kafkaFile reports whether name is one of Kafka's own files of a
// partition directory (parseKafkaName).
func kafkaFile(name string) bool {
	_, _, ok := parseKafkaName(name)
	return ok
}

// KafkaFile is one of Kafka's files of a partition directory, as
// ListKafkaFiles found it.
type KafkaFile struct {
	os.FileInfo        // the entry itself (a link is described, not followed)
	Base        int64  // the segment's base offset; -1 for a metadata file
	Kind        string // what follows the base offset, e.g. ".log" or ".index.swap"; the name of a metadata file
}

// ListKafkaFiles lists Kafka's files of the partition directory dir
// through fsys, by base offset then name, the metadata files last: the
// regular files in files, and in refused those that are not (a symbolic
// link, a FIFO, a directory), which partfs neither follows nor opens. It
// is the one listing of a partition directory's segment files; other
// names are left out.
func ListKafkaFiles(fsys vfs.FS, dir string) (files, refused []KafkaFile, err error) {
	des, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, de := range des {
		base, kind, ok := parseKafkaName(de.Name())
		if !ok {
			continue
		}
		fi, err := de.Info()
		switch {
		case isNotExist(err): // gone since the listing
		case err != nil:
			return nil, nil, fmt.Errorf("list %s: %w", dir, err)
		case fi.Mode().IsRegular():
			files = append(files, KafkaFile{fi, base, kind})
		default:
			refused = append(refused, KafkaFile{fi, base, kind})
		}
	}
	byBase := func(a, b KafkaFile) int {
		return cmp.Or(cmp.Compare(uint64(a.Base), uint64(b.Base)), strings.Compare(a.Name(), b.Name()))
	}
	slices.SortFunc(files, byBase)
	slices.SortFunc(refused, byBase)
	return files, refused, nil
}

// fileInfo turns an lstat/fstat result into a partlog.FileInfo; ok is false
// for anything but a regular file.
func fileInfo(fi os.FileInfo) (partlog.FileInfo, bool) {
	if !fi.Mode().IsRegular() {
		return partlog.FileInfo{}, false
	}
	out := partlog.FileInfo{Name: fi.Name(), Size: fi.Size(), ModTime: fi.ModTime(), Blocks: (fi.Size() + 511) / 512}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.Blocks, out.ID = st.Blocks, st.Ino
	}
	return out, true
}

// SegmentFiles lists Kafka's regular files of the partition directory; a
// symbolic link is not listed (the listing does not follow links).
func (l *Log) SegmentFiles() ([]partlog.FileInfo, error) {
	files, _, err := ListKafkaFiles(l.fs, l.dir)
	if err != nil {
		return nil, err
	}
	out := make([]partlog.FileInfo, 0, len(files))
	for _, f := range files {
		if inf, ok := fileInfo(f.FileInfo); ok {
			out = append(out, inf)
		}
	}
	return out, nil
}

// StatSegmentFile describes one file SegmentFiles lists, through an open
// that refuses symbolic links.
func (l *Log) StatSegmentFile(name string) (partlog.FileInfo, error) {
	f, err := l.OpenSegmentFile(name)
	if err != nil {
		return partlog.FileInfo{}, err
	}
	defer f.Close()
	return f.(*segmentFile).info, nil
}

// segmentFile is an open Kafka file with what fstat said of it.
type segmentFile struct {
	vfs.File
	info partlog.FileInfo
}

var _ partlog.SegmentFileDuper = (*segmentFile)(nil)

// DupFile returns a descriptor of the same open file (vfs.DupFile).
func (f *segmentFile) DupFile() (*os.File, error) { return vfs.DupFile(f.File) }

// OpenSegmentFile opens one of Kafka's files of the partition for reading:
// O_NOFOLLOW refuses a symbolic link, O_NONBLOCK keeps a FIFO from blocking
// the open, and fstat must then show a regular file.
func (l *Log) OpenSegmentFile(name string) (partlog.SegmentFile, error) {
	notFound := func(why string) error {
		return fmt.Errorf("segment file %q of %s: %s: %w", name, l.dir, why, partlog.ErrNotFound)
	}
	if strings.ContainsRune(name, '/') || !kafkaFile(name) {
		return nil, notFound("not a Kafka file of the partition")
	}
	path := filepath.Join(l.dir, name)
	f, fi, err := vfs.OpenStat(l.fs, path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, vfs.ErrOutside) {
		return nil, notFound("a symbolic link")
	}
	if isNotExist(err) {
		return nil, notFound("absent")
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	inf, ok := fileInfo(fi)
	if !ok {
		f.Close()
		return nil, notFound("not a regular file")
	}
	inf.Name = name
	return &segmentFile{File: f, info: inf}, nil
}
