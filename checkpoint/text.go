package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// readAll returns the file's contents; a missing file reads as empty.
func readAll(fs vfs.FS, path string) ([]byte, error) {
	b, err := vfs.ReadFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// readCheckpoint reads path (missing: no entries) and parses it with
// parseCheckpoint.
func readCheckpoint(fs vfs.FS, path string) ([][]string, error) {
	text, err := readAll(fs, path)
	if err != nil {
		return nil, err
	}
	return parseCheckpoint(path, text)
}

// parseCheckpoint parses Kafka's CheckpointFile text: a version line, a
// count line, then count entry lines. It returns the entries, each split
// on white space, with their 1-based line numbers. Empty text has none.
func parseCheckpoint(path string, text []byte) ([][]string, error) {
	lines := splitLines(text)
	if len(lines) == 0 {
		return nil, nil
	}
	ver, err := strconv.Atoi(lines[0])
	if err != nil || ver != currentCheckpointVer {
		return nil, &record.CorruptionError{File: path, Line: 1, Reason: fmt.Sprintf("unsupported version %q", lines[0])}
	}
	if len(lines) < 2 {
		return nil, nil // Kafka's reader: no count line = no entries
	}
	count, err := strconv.Atoi(lines[1])
	if err != nil || count < 0 {
		return nil, &record.CorruptionError{File: path, Line: 2, Reason: fmt.Sprintf("bad entry count %q", lines[1])}
	}
	entries := make([][]string, 0, len(lines)-2)
	for _, l := range lines[2:] {
		entries = append(entries, strings.Fields(l))
	}
	if len(entries) != count {
		return nil, &record.CorruptionError{File: path, Line: 2 + len(entries),
			Reason: fmt.Sprintf("expected %d entries but found %d", count, len(entries))}
	}
	return entries, nil
}

// splitLines splits on "\n" (tolerating "\r\n"), dropping the empty
// remainder after a final newline.
func splitLines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(text), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// formatCheckpoint renders version 0, the count and the entry lines.
func formatCheckpoint(lines []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", currentCheckpointVer, len(lines))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// parseInt parses field i of an entry as a base-10 integer of bits bits.
func parseInt(path string, line int, fields []string, i int, bits int) (int64, error) {
	v, err := strconv.ParseInt(fields[i], 10, bits)
	if err != nil {
		return 0, &record.CorruptionError{File: path, Line: line, Reason: fmt.Sprintf("bad number %q", fields[i])}
	}
	return v, nil
}
