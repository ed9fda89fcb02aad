package inspect

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/partfs/partfs/checkpoint"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/progress"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// checker accumulates what Check finds.
type checker struct {
	w        io.Writer
	rpPath   string
	rp       map[checkpoint.TopicPartition]int64 // recovery points, when readable
	damaged  bool
	segments int
	indexes  int
	batches  int64
	progress *progress.Reporter // nil when not reporting
}

func (c *checker) damage(format string, args ...any) {
	c.damaged = true
	fmt.Fprintf(c.w, "DAMAGE "+format+"\n", args...)
}

func (c *checker) note(format string, args ...any) {
	fmt.Fprintf(c.w, "note: "+format+"\n", args...)
}

// Check verifies every segment and index of the data directory dataDir
// without changing anything: batch sizes and CRCs, record decoding, batch
// offsets inside their segment and segments not overlapping, each index
// entry against the batch it points at (Kafka's --verify-index), index file
// sizes, and the root checkpoint files. Each finding names the file and the
// position. damaged reports whether anything was found; err is an I/O error
// that stopped the check.
func Check(w io.Writer, dataDir string) (damaged bool, err error) {
	return CheckProgress(w, dataDir, nil)
}

// CheckProgress is Check, reporting bytes checked, rate and ETA to
// progressTo (redrawn on a terminal, periodic lines otherwise) unless nil.
func CheckProgress(w io.Writer, dataDir string, progressTo io.Writer) (damaged bool, err error) {
	c := &checker{w: w}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return false, fmt.Errorf("check %s: %w", dataDir, err)
	}
	if progressTo != nil {
		c.progress = progress.Start(progressTo, "check "+dataDir, segmentBytes(dataDir, entries), progress.Options{})
		defer c.progress.Done("")
	}
	c.checkRootFiles(dataDir)
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 && isPartitionDir(e.Name()) {
			c.damage("%s: a symbolic link; partfs does not follow it and skips the partition", filepath.Join(dataDir, e.Name()))
		}
		if e.IsDir() && isPartitionDir(e.Name()) {
			end, err := c.checkPartition(filepath.Join(dataDir, e.Name()))
			if err != nil {
				return c.damaged, err
			}
			c.checkRecoveryPoint(e.Name(), end)
		}
	}
	c.progress.Done("")
	state := "OK"
	if c.damaged {
		state = "DAMAGED"
	}
	fmt.Fprintf(w, "%s: %d segments, %d batches, %d indexes checked: %s\n", dataDir, c.segments, c.batches, c.indexes, state)
	return c.damaged, nil
}

// segmentBytes is the size of every .log file of the partitions in dataDir.
func segmentBytes(dataDir string, entries []os.DirEntry) int64 {
	var total int64
	for _, e := range entries {
		if !e.IsDir() || !isPartitionDir(e.Name()) {
			continue
		}
		files, _, _ := logstore.ListKafkaFiles(vfs.Default, filepath.Join(dataDir, e.Name()))
		for _, f := range files {
			if f.Kind == kafkaname.LogSuffix {
				total += f.Size()
			}
		}
	}
	return total
}

// isPartitionDir matches the directories the store opens as partitions
// (kafkaname.ParsePartitionDir).
func isPartitionDir(name string) bool {
	_, _, ok := kafkaname.ParsePartitionDir(name)
	return ok
}

// checkRecoveryPoint reports a recovery point past the partition's end.
func (c *checker) checkRecoveryPoint(dirName string, end int64) {
	topic, n, _ := kafkaname.ParsePartitionDir(dirName)
	if rp, ok := c.rp[checkpoint.TopicPartition{Topic: topic, Partition: n}]; ok && rp > end {
		c.damage("%s: %s %d: recovery point %d is past the log end offset %d", c.rpPath, topic, n, rp, end)
	}
}

func (c *checker) checkRootFiles(dir string) {
	for _, name := range kafkaname.OffsetCheckpointFiles {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		m, err := checkpoint.ReadOffsets(vfs.Default, path)
		if err != nil {
			c.damage("%s: %v", path, err)
		}
		if name == kafkaname.RecoveryPointFile && err == nil {
			c.rpPath, c.rp = path, m
		}
	}
}

// checkPartition checks the segments of one partition directory in order
// and returns its log end offset.
func (c *checker) checkPartition(dir string) (int64, error) {
	files, refused, err := logstore.ListKafkaFiles(vfs.Default, dir)
	if err != nil {
		return 0, fmt.Errorf("check %s: %w", dir, err)
	}
	for _, f := range refused {
		what := "a symbolic link"
		if f.Mode()&os.ModeSymlink == 0 {
			what = fmt.Sprintf("not a regular file (%s)", f.Mode().Type())
		}
		c.damage("%s: %s; partfs does not follow it and does not open the partition", filepath.Join(dir, f.Name()), what)
	}
	var logs []logstore.KafkaFile
	for _, f := range files {
		switch {
		case f.Kind == kafkaname.LogSuffix:
			logs = append(logs, f)
		case strings.HasSuffix(f.Kind, kafkaname.CleanedSuffix) || strings.HasSuffix(f.Kind, kafkaname.SwapSuffix):
			c.note("%s: left by an interrupted compaction; the next open finishes or undoes it", filepath.Join(dir, f.Name()))
		}
	}
	prevNext := int64(-1)
	for i, f := range logs {
		limit := int64(math.MaxInt64)
		if i+1 < len(logs) {
			limit = logs[i+1].Base
		}
		next, err := c.checkSegment(filepath.Join(dir, f.Name()), f.Base, prevNext, limit)
		if err != nil {
			return 0, err
		}
		prevNext = next
	}
	return max(prevNext, 0), nil
}

// checkSegment checks one .log (base: its base offset) and its indexes
// (limit: the next segment's base offset); it returns the offset after its
// last valid batch.
func (c *checker) checkSegment(path string, base, prevNext, limit int64) (int64, error) {
	c.segments++
	if prevNext > base {
		c.damage("%s: base offset %d overlaps the previous segment, which ends at offset %d", path, base, prevNext-1)
	}
	if prevNext >= 0 && prevNext < base {
		c.note("%s: offsets %d..%d are in no segment (the previous segment ends at offset %d; compaction or a missing segment)",
			path, prevNext, base-1, prevNext-1)
	}
	f, fi, err := vfs.OpenStat(vfs.Default, path, os.O_RDONLY|syscall.O_NOFOLLOW)
	if errors.Is(err, syscall.ELOOP) {
		return prevNext, nil // reported with the directory's entries
	}
	if err != nil {
		return prevNext, fmt.Errorf("check %s: %w", path, err)
	}
	defer f.Close()
	next := c.checkBatches(f, path, base, limit, fi.Size())
	c.checkIndexes(path, base)
	return next, nil
}

// checkBatches scans a segment: CRCs, sizes, record decoding and offsets
// (inside [base, limit), each V2 batch after the one before it).
func (c *checker) checkBatches(f io.ReaderAt, path string, base, limit, size int64) int64 {
	sc := record.NewScanner(f, 0, size, path)
	var dec record.Decoder
	order := record.NewOffsetOrder(base, limit)
	next := base
	for sc.Next() {
		b := sc.Batch()
		h := &b.Header
		c.batches++
		c.progress.Add(h.Size())
		switch err := order.Check(b); {
		case err != nil:
			c.damage("%v", err)
		case h.LastOffset()-base > 1<<31-1:
			c.damage("%s: at position %d: offset %d does not fit the segment's 32-bit relative offsets", path, b.Pos, h.LastOffset())
		}
		if err := dec.Records(b, func(*record.Record) bool { return true }); err != nil {
			c.damage("%s: at position %d: %v", path, b.Pos, err)
		}
		next = max(next, h.LastOffset()+1)
	}
	if err := sc.Err(); err != nil {
		var ce *record.CorruptionError
		if errors.As(err, &ce) {
			c.damage("%s: at position %d: %s (%d bytes from there to the end)", path, ce.Pos, ce.Reason, size-ce.Pos)
		} else {
			c.damage("%s: %v", path, err)
		}
	}
	return next
}

// checkIndexes verifies the .index and .timeindex beside a segment.
func (c *checker) checkIndexes(logPath string, base int64) {
	stem := strings.TrimSuffix(logPath, kafkaname.LogSuffix)
	for _, suf := range []string{kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix} {
		path := stem + suf
		fi, err := os.Stat(path)
		if err != nil {
			c.note("%s: missing; the next open rebuilds it", path)
			continue
		}
		c.indexes++
		entry := int64(8)
		if suf == kafkaname.TimeIndexSuffix {
			entry = 12
		}
		if fi.Size()%entry != 0 {
			c.damage("%s: size %d is not a whole number of %d-byte entries", path, fi.Size(), entry)
		}
		problems, err := VerifyIndex(path)
		if err != nil {
			c.damage("%s: %v", path, err)
			continue
		}
		for _, p := range problems {
			c.damage("%s", p.String())
		}
	}
}
