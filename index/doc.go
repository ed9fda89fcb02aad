// Package index owns Kafka's sparse segment indexes, byte for byte as a
// broker writes them (kafka-format.md §3):
//
//	.index      8-byte entries, big-endian, no header:
//	            +----------------------+----------------------+
//	            | relativeOffset int32 | position int32       |
//	            +----------------------+----------------------+
//	.timeindex  12-byte entries, big-endian, no header:
//	            +----------------------+----------------------+
//	            | timestamp int64      | relativeOffset int32 |
//	            +----------------------+----------------------+
//
// relativeOffset = offset - segment base offset; position = byte position
// of the start of a batch in the .log. An active index is preallocated with
// zeros to segment.index.bytes rounded down to the entry size and trimmed
// to its entries on roll and close. An existing file is taken as full of
// entries (Kafka's "assume it is valid"); the caller checks it with
// SanityCheck and rebuilds it (Reset, then Builder) when the check fails.
//
// Entries are read with pread into memory on first lookup (no mmap) and
// written with pwrite. Lookups search the "warm" last 8 KiB of entries
// first, as Kafka does, so tail reads touch only recently written entries.
// Builder applies Kafka's rule for when an append gets index entries.
// The package imports nothing else of partfs.
package index

import (
	"io"
	"os"
)

// File is what an index needs of its file; vfs.File and *os.File satisfy it.
type File interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Close() error
	Stat() (os.FileInfo, error)
	Name() string
}

// warmBytes is the size of the warm section searched first (Kafka's
// AbstractIndex.warmEntries: 8192 bytes of entries).
const warmBytes = 8192

// DefaultMaxBytes is Kafka's default segment.index.bytes (10 MiB).
const DefaultMaxBytes = 10 * 1024 * 1024
