package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// ErrIndexMismatch is wrapped by DumpIndex's error when VerifyIndex found
// entries that do not match the .log beside the index.
var ErrIndexMismatch = errors.New("index does not match the log")

// IndexProblem is one finding of an index verification, as Kafka's
// kafka-dump-log reports it.
type IndexProblem struct {
	Kind string // "offset_mismatch", "timestamp_mismatch", "out_of_order", "offset_not_found"
	File string // the index file
	A, B int64  // index value, log (or previous) value
}

// indexEntry is one decoded entry: Key/Value are (offset, position) for an
// .index and (timestamp, offset) for a .timeindex.
type indexEntry struct{ Key, Value int64 }

// indexFile is a decoded index file.
type indexFile struct {
	path     string
	base     int64
	time     bool
	entries  []indexEntry
	trailing int // bytes after the last whole entry
	zeroTail int // bytes of the all-zero entries that end the file, preallocated and unused
}

// DumpIndex prints the entries of an .index or .timeindex file like
// kafka-dump-log ("offset: N position: P" / "timestamp: T offset: O", or
// with JSON one object per entry), stopping at the first entry after the
// first whose offset is the base offset (the zeros of a preallocated
// file). With VerifyIndex each entry is checked against the .log beside
// the file; mismatches are printed after the entries in Kafka's words and
// the returned error wraps ErrIndexMismatch.
func DumpIndex(w io.Writer, file string, opt DumpOptions) error {
	x, err := readIndexFile(file)
	if err != nil {
		return err
	}
	if err := printEntries(w, x, opt.JSON); err != nil {
		return err
	}
	if !opt.VerifyIndex {
		return nil
	}
	problems, err := verifyIndex(x)
	if err != nil {
		return err
	}
	if err := printProblems(w, x, problems, opt.JSON); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %d problems: %w", file, len(problems), ErrIndexMismatch)
	}
	return nil
}

// verdict is the line that ends a text --verify-index dump.
func verdict(x *indexFile, problems []IndexProblem) string {
	s := fmt.Sprintf("Verified %d entries against %s: ", len(x.entries), kafkaname.SegmentFile(x.base, kafkaname.LogSuffix))
	if len(problems) == 0 {
		s += "all match"
	} else {
		s += fmt.Sprintf("%d problems: the index does not match the log", len(problems))
	}
	if x.zeroTail > 0 {
		s += fmt.Sprintf(" (then %d bytes of preallocated zero entries, unused)", x.zeroTail)
	}
	return s
}

// VerifyIndex checks an .index or .timeindex against the .log beside it
// and returns what does not match (for `partfs check`).
func VerifyIndex(file string) ([]IndexProblem, error) {
	x, err := readIndexFile(file)
	if err != nil {
		return nil, err
	}
	return verifyIndex(x)
}

// baseOffsetOf parses the 20-digit base offset before the first '.'.
func baseOffsetOf(path string) (int64, error) {
	name := filepath.Base(path)
	digits, _, _ := strings.Cut(name, ".")
	base, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || base < 0 {
		return 0, fmt.Errorf("%s: file name does not start with a base offset", path)
	}
	return base, nil
}

// readIndexFile reads and decodes an index file, cut at the first
// all-zero entry (the preallocated, unused tail of an active or uncleanly
// closed segment's index, which Kafka's loader accepts; no rule of Kafka's
// writes such an entry) or at the first repeated base-offset entry, as
// kafka-dump-log does.
func readIndexFile(path string) (*indexFile, error) {
	base, err := baseOffsetOf(path)
	if err != nil {
		return nil, err
	}
	x := &indexFile{path: path, base: base, time: strings.Contains(filepath.Base(path), kafkaname.TimeIndexSuffix)}
	if !x.time && !strings.Contains(filepath.Base(path), kafkaname.IndexSuffix) {
		return nil, fmt.Errorf("%s: not an .index or .timeindex file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	size := index.OffsetEntrySize
	if x.time {
		size = index.TimeEntrySize
	}
	x.trailing = len(data) % size
	for i := 0; i+size <= len(data); i += size {
		if allZero(data[i : i+size]) {
			x.zeroTail = len(data) - x.trailing - i
			break
		}
		e := x.decode(data[i : i+size])
		if i > 0 && x.offsetOf(e) == base {
			break
		}
		x.entries = append(x.entries, e)
	}
	return x, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func (x *indexFile) decode(b []byte) indexEntry {
	if x.time {
		ts, rel := index.DecodeTimeEntry(b)
		return indexEntry{ts, x.base + int64(rel)}
	}
	rel, pos := index.DecodeOffsetEntry(b)
	return indexEntry{x.base + int64(rel), int64(pos)}
}

func (x *indexFile) offsetOf(e indexEntry) int64 {
	if x.time {
		return e.Value
	}
	return e.Key
}

// printEntries writes one line per entry.
func printEntries(w io.Writer, x *indexFile, asJSON bool) error {
	for _, e := range x.entries {
		var err error
		switch {
		case asJSON && x.time:
			_, err = fmt.Fprintf(w, "{\"timestamp\":%d,\"offset\":%d}\n", e.Key, e.Value)
		case asJSON:
			_, err = fmt.Fprintf(w, "{\"offset\":%d,\"position\":%d}\n", e.Key, e.Value)
		case x.time:
			_, err = fmt.Fprintf(w, "timestamp: %d offset: %d\n", e.Key, e.Value)
		default:
			_, err = fmt.Fprintf(w, "offset: %d position: %d\n", e.Key, e.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// logBeside opens the .log of the index's segment.
func logBeside(x *indexFile) (vfs.File, int64, error) {
	name := filepath.Join(filepath.Dir(x.path), kafkaname.SegmentFile(x.base, kafkaname.LogSuffix))
	f, fi, err := vfs.OpenStat(vfs.Default, name, os.O_RDONLY)
	if err != nil {
		return nil, 0, fmt.Errorf("verify %s: %w", x.path, err)
	}
	return f, fi.Size(), nil
}

func verifyIndex(x *indexFile) ([]IndexProblem, error) {
	log, size, err := logBeside(x)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	if x.time {
		return verifyTimeIndex(x, log, size)
	}
	return verifyOffsetIndex(x, log, size)
}

// verifyOffsetIndex checks that the batch at each entry's position ends at
// the entry's offset (Kafka: "Index offset X, log offset Y").
func verifyOffsetIndex(x *indexFile, log io.ReaderAt, size int64) ([]IndexProblem, error) {
	var problems []IndexProblem
	hdr := make([]byte, record.BatchHeaderSize)
	for _, e := range x.entries {
		last := int64(-1)
		if e.Value >= 0 && e.Value < size {
			n, _ := log.ReadAt(hdr, e.Value)
			if h, err := record.ParseHeader(hdr[:n]); err == nil {
				last = h.LastOffset()
			}
		}
		if last != e.Key {
			problems = append(problems, IndexProblem{Kind: "offset_mismatch", File: x.path, A: e.Key, B: last})
		}
	}
	return problems, nil
}

// verifyTimeIndex finds, for each entry, the first batch with last offset
// >= the entry's offset (starting at the offset index's position for it)
// and checks that the offset lies inside that batch and that its largest
// record timestamp is the entry's, and that timestamps increase. Kafka 2.x
// indexes a batch's last offset, 3.x the offset of the first record that
// carries the batch's largest timestamp: both lie inside the batch, and a
// time lookup finds the same batch from either.
func verifyTimeIndex(x *indexFile, log io.ReaderAt, size int64) ([]IndexProblem, error) {
	positions := offsetIndexBeside(x)
	var problems []IndexProblem
	var dec record.Decoder
	prev := int64(-1)
	for _, e := range x.entries {
		b, err := firstBatchEndingAtOrAfter(log, startPosition(positions, e.Value), size, e.Value, x.path)
		if err != nil {
			return problems, err
		}
		switch {
		case b == nil:
			problems = append(problems, IndexProblem{Kind: "offset_not_found", File: x.path, A: e.Value, B: -1})
		case b.Header.BaseOffset > e.Value:
			problems = append(problems, IndexProblem{Kind: "offset_not_found", File: x.path, A: e.Value, B: b.Header.LastOffset()})
		default:
			maxTs, err := batchMaxTimestamp(&dec, b)
			if err != nil {
				return problems, err
			}
			if maxTs != e.Key {
				problems = append(problems, IndexProblem{Kind: "timestamp_mismatch", File: x.path, A: e.Key, B: maxTs})
			}
			if prev >= e.Key {
				problems = append(problems, IndexProblem{Kind: "out_of_order", File: x.path, A: e.Key, B: prev})
			}
		}
		prev = e.Key
	}
	return problems, nil
}

// offsetIndexBeside returns the entries of the segment's .index (none if
// it is missing or unreadable: the search then starts at 0).
func offsetIndexBeside(x *indexFile) []indexEntry {
	oi, err := readIndexFile(filepath.Join(filepath.Dir(x.path), kafkaname.SegmentFile(x.base, kafkaname.IndexSuffix)))
	if err != nil {
		return nil
	}
	return oi.entries
}

// startPosition is the position of the largest .index entry <= offset.
func startPosition(entries []indexEntry, offset int64) int64 {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].Key > offset })
	if i == 0 {
		return 0
	}
	return entries[i-1].Value
}

// firstBatchEndingAtOrAfter scans from pos for the first batch whose last
// offset is >= offset; nil if none. Corruption is an error.
func firstBatchEndingAtOrAfter(log io.ReaderAt, pos, size, offset int64, file string) (*record.Batch, error) {
	sc := record.NewScanner(log, pos, size, file)
	for sc.Next() {
		if b := sc.Batch(); b.Header.LastOffset() >= offset {
			return b, nil
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, record.ErrTruncated) {
		return nil, err
	}
	return nil, nil
}

// batchMaxTimestamp is the largest record timestamp of b (Kafka iterates
// the records rather than trusting the header).
func batchMaxTimestamp(dec *record.Decoder, b *record.Batch) (int64, error) {
	maxTs := int64(-1)
	err := dec.Records(b, func(r *record.Record) bool {
		maxTs = max(maxTs, r.Timestamp)
		return true
	})
	return maxTs, err
}

// printProblems prints findings after the entries: Kafka's texts and the
// verdict line, or one JSON object each.
func printProblems(w io.Writer, x *indexFile, problems []IndexProblem, asJSON bool) error {
	last := ""
	for _, p := range problems {
		var err error
		if asJSON {
			err = json.NewEncoder(w).Encode(p.jsonObject())
		} else {
			if head := p.heading(); head != last {
				if _, err := fmt.Fprintln(w, head); err != nil {
					return err
				}
				last = head
			}
			_, err = fmt.Fprintln(w, p.Text())
		}
		if err != nil {
			return err
		}
	}
	if asJSON {
		return nil
	}
	_, err := fmt.Fprintln(w, verdict(x, problems))
	return err
}

// heading is the line Kafka prints before a group of findings.
func (p IndexProblem) heading() string {
	switch p.Kind {
	case "offset_mismatch":
		return "Mismatches in :" + p.File
	case "timestamp_mismatch":
		return "Found timestamp mismatch in :" + p.File
	case "out_of_order":
		return "Found out of order timestamp in :" + p.File
	default:
		return "The following indexed offsets are not found in the log."
	}
}

// Text is Kafka's line for one finding.
func (p IndexProblem) Text() string {
	switch p.Kind {
	case "offset_mismatch":
		return fmt.Sprintf("  Index offset: %d, log offset: %d", p.A, p.B)
	case "timestamp_mismatch":
		return fmt.Sprintf("  Index timestamp: %d, log timestamp: %d", p.A, p.B)
	case "out_of_order":
		return fmt.Sprintf("  Index timestamp: %d, Previously indexed timestamp: %d", p.A, p.B)
	default:
		return fmt.Sprintf("Indexed offset: %d, found log offset: %d", p.A, p.B)
	}
}

// String names the file and the finding (for logs and `partfs check`).
func (p IndexProblem) String() string {
	return p.File + ": " + strings.TrimSpace(p.Text())
}

func (p IndexProblem) jsonObject() map[string]any {
	names := map[string][2]string{
		"offset_mismatch":    {"index_offset", "log_offset"},
		"timestamp_mismatch": {"index_timestamp", "log_timestamp"},
		"out_of_order":       {"index_timestamp", "previous_timestamp"},
		"offset_not_found":   {"index_offset", "log_offset"},
	}
	n := names[p.Kind]
	return map[string]any{"mismatch": p.Kind, "file": p.File, n[0]: p.A, n[1]: p.B}
}

// DumpTxnIndex prints the aborted transactions of a .txnindex file, one
// per line as kafka-dump-log does ("version: V producerId: P firstOffset:
// F lastOffset: L lastStableOffset: S"), or with JSON one object each. A
// damaged tail (an unknown version, a partial entry) is an error after the
// entries before it.
func DumpTxnIndex(w io.Writer, file string, opt DumpOptions) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read transaction index: %w", err)
	}
	entries, perr := index.ParseTxnIndex(data, file)
	for _, e := range entries {
		format := "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n"
		if opt.JSON {
			format = `{"version":%d,"producer_id":%d,"first_offset":%d,"last_offset":%d,"last_stable_offset":%d}` + "\n"
		}
		if _, err := fmt.Fprintf(w, format, e.Version, e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset); err != nil {
			return err
		}
	}
	return perr
}
