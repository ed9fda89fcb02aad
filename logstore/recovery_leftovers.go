package logstore

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// segmentFiles is what resolveLeftovers found for one segment: its base
// offset, the operation suffix its files carry ("" or, on a read-only
// store that cannot rename, ".swap") and whether it has a .txnindex.
type segmentFiles struct {
	base   int64
	suffix string
	txn    bool
}

// segmentKind returns the Kafka suffix of a segment file name without an
// operation suffix, or "".
func segmentKind(name string) string {
	for _, suf := range []string{kafkaname.LogSuffix, kafkaname.IndexSuffix, kafkaname.TimeIndexSuffix, kafkaname.TxnIndexSuffix} {
		if strings.HasSuffix(name, suf) {
			return suf
		}
	}
	return ""
}

// resolveLeftovers applies Kafka's loader steps 1–2 (kafka-format.md §5):
// stray .deleted and every .cleaned file are removed, a .swap at or above
// the smallest .cleaned offset is an incomplete split and removed, and the
// remaining .swap files replace the segments in their offset range. It
// returns the segments to load, sorted by base offset.
func (l *Log) resolveLeftovers() ([]segmentFiles, error) {
	des, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", l.dir, err)
	}
	minCleaned := int64(math.MaxInt64)
	var swaps, plain []string
	var errs []error
	for _, fi := range des {
		name := fi.Name()
		base, ok := kafkaname.ParseBase(name)
		switch {
		case fi.IsDir() || !ok:
		case strings.HasSuffix(name, kafkaname.DeletedSuffix):
			if !strings.HasSuffix(name, ".checkpoint.deleted") {
				errs = append(errs, l.removeLeftover(name, "stray .deleted file"))
			}
		case strings.HasSuffix(name, kafkaname.CleanedSuffix):
			minCleaned = min(minCleaned, base)
			errs = append(errs, l.removeLeftover(name, "unfinished cleaning"))
		case strings.HasSuffix(name, kafkaname.SwapSuffix):
			swaps = append(swaps, name)
		case segmentKind(name) != "":
			plain = append(plain, name)
		}
	}
	var kept []string
	for _, name := range swaps {
		if base, _ := kafkaname.ParseBase(name); base >= minCleaned {
			errs = append(errs, l.removeLeftover(name, "incomplete split"))
			continue
		}
		kept = append(kept, name)
	}
	segs, err := l.completeSwaps(kept, plain)
	errs = append(errs, err)
	return segs, errors.Join(errs...)
}

// completeSwaps finishes an interrupted swap: segment files in the swap
// range are removed and the .swap files renamed to their final names.
func (l *Log) completeSwaps(swaps, plain []string) ([]segmentFiles, error) {
	lo, hi := int64(math.MaxInt64), int64(-1)
	for _, name := range swaps {
		if !strings.HasSuffix(name, kafkaname.LogSuffix+kafkaname.SwapSuffix) {
			continue
		}
		base, _ := kafkaname.ParseBase(name)
		lo = min(lo, base)
		hi = max(hi, l.readNextOffset(l.dir+"/"+name, base))
	}
	var errs []error
	bases := map[int64]string{}
	kept := map[string]bool{} // the names left, as a segment's files are named
	for _, name := range plain {
		base, _ := kafkaname.ParseBase(name)
		if base >= lo && base < hi {
			errs = append(errs, l.removeLeftover(name, "replaced by a .swap segment"))
			continue
		}
		kept[name] = true
		if segmentKind(name) == kafkaname.LogSuffix {
			bases[base] = ""
		}
	}
	for _, name := range swaps {
		base, _ := kafkaname.ParseBase(name)
		if l.readOnly {
			kept[name] = true
			if strings.HasSuffix(name, kafkaname.LogSuffix+kafkaname.SwapSuffix) {
				bases[base] = kafkaname.SwapSuffix
			}
			continue
		}
		final := strings.TrimSuffix(name, kafkaname.SwapSuffix)
		if err := l.fs.Rename(l.dir+"/"+name, l.dir+"/"+final); err != nil {
			errs = append(errs, fmt.Errorf("rename %s to %s: %w", name, final, err))
			continue
		}
		l.logger.WithField("file", name).Info("completed an interrupted segment swap")
		kept[final] = true
		if strings.HasSuffix(final, kafkaname.LogSuffix) {
			bases[base] = ""
		}
	}
	if len(swaps) > 0 && !l.readOnly {
		errs = append(errs, l.fs.SyncDir(l.dir))
	}
	out := make([]segmentFiles, 0, len(bases))
	for b, suf := range bases {
		txn := kept[kafkaname.SegmentFile(b, kafkaname.TxnIndexSuffix)+suf]
		out = append(out, segmentFiles{base: b, suffix: suf, txn: txn})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].base < out[j].base })
	return out, errors.Join(errs...)
}

func (l *Log) removeLeftover(name, why string) error {
	if l.readOnly {
		return nil
	}
	l.logger.WithField("file", name).WithField("reason", why).Info("removing leftover file")
	if err := l.fs.Remove(l.dir + "/" + name); err != nil && !isNotExist(err) {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}

// readNextOffset scans a segment file for the offset after its last valid
// batch (base if none).
func (l *Log) readNextOffset(path string, base int64) int64 {
	f, fi, err := vfs.OpenStat(l.fs, path, os.O_RDONLY)
	if err != nil {
		return base
	}
	defer f.Close()
	next := base
	sc := record.NewScanner(f, 0, fi.Size(), path)
	for sc.Next() {
		next = max(next, sc.Batch().Header.LastOffset()+1)
	}
	return next
}
