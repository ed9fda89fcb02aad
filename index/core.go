package index

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/partfs/partfs/record"
)

// core is what both index kinds share: the file, the entry count, the
// capacity and the lazily loaded in-memory copy of the entries.
//
// Locking: mu guards every field below it. Lookups take mu for reading
// once the entries are loaded; appends, truncations and resizes take it
// for writing. loaded is read without mu on the lookup path.
type core struct {
	f         File
	base      int64
	entrySize int
	readOnly  bool

	loaded atomic.Bool
	mu     sync.RWMutex
	// REQUIRES: mu held for all below.
	entries    int    // valid entries
	maxEntries int    // capacity = file length / entrySize
	fileSize   int64  // the file's length
	maxBytes   int    // capacity to restore on Reset (0: none)
	last       []byte // the last entry's bytes (valid when entries > 0)
	mem        []byte // entries*entrySize bytes once loaded
	loadErr    error
}

func roundDown(n, m int) int { return n / m * m }

// open sizes the file: an empty file with maxBytes > 0 is preallocated; an
// existing file counts as full of entries and grows to maxBytes if smaller.
func (c *core) open(f File, base int64, maxBytes, entrySize int, readOnly bool) error {
	c.f, c.base, c.entrySize, c.readOnly = f, base, entrySize, readOnly
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat index %s: %w", f.Name(), err)
	}
	if fi.Size() > math.MaxInt32 {
		return &record.CorruptionError{File: f.Name(), Reason: fmt.Sprintf("file size %d exceeds 2 GiB", fi.Size())}
	}
	size := int(fi.Size())
	c.fileSize = fi.Size()
	c.entries = size / entrySize
	c.maxEntries = c.entries
	if err := c.readLast(); err != nil {
		return err
	}
	if readOnly || maxBytes <= 0 {
		return nil
	}
	c.maxBytes = roundDown(maxBytes, entrySize)
	if c.maxBytes > size {
		return c.resize(c.maxBytes)
	}
	return nil
}

// readLast caches the last entry. REQUIRES: mu held (or not yet shared).
func (c *core) readLast() error {
	c.last = make([]byte, c.entrySize)
	if c.entries == 0 {
		return nil
	}
	pos := int64(c.entries-1) * int64(c.entrySize)
	if _, err := c.f.ReadAt(c.last, pos); err != nil {
		return fmt.Errorf("read last entry of index %s at %d: %w", c.f.Name(), pos, err)
	}
	return nil
}

// ensureLoaded reads the entries into memory once; false if they cannot
// be read (LoadErr says why; the next call tries again).
func (c *core) ensureLoaded() bool {
	if c.loaded.Load() {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loadLocked() == nil
}

// loadLocked reads the entries. REQUIRES: mu held for writing.
func (c *core) loadLocked() error {
	if c.loaded.Load() {
		return nil
	}
	buf := make([]byte, c.entries*c.entrySize)
	if len(buf) > 0 {
		if _, err := c.f.ReadAt(buf, 0); err != nil {
			c.loadErr = fmt.Errorf("read index %s: %w", c.f.Name(), err)
			return c.loadErr
		}
	}
	c.mem, c.loadErr = buf, nil
	c.loaded.Store(true)
	return nil
}

// entryAt returns the bytes of entry i. REQUIRES: mu held, loaded.
func (c *core) entryAt(i int) []byte {
	return c.mem[i*c.entrySize : (i+1)*c.entrySize]
}

// checkWritable reports why nothing may be appended. REQUIRES: mu held.
func (c *core) checkWritable(skipFullCheck bool, full int) error {
	if c.readOnly {
		return fmt.Errorf("append to %s: %w", c.f.Name(), ErrReadOnly)
	}
	if c.entries >= c.maxEntries || (!skipFullCheck && c.entries >= full) {
		return fmt.Errorf("append to %s with %d entries: %w", c.f.Name(), c.entries, ErrFull)
	}
	return nil
}

// relative converts offset to a relative offset, checking its range.
func (c *core) relative(offset int64) (int32, error) {
	if !Indexable(c.base, offset) {
		return 0, fmt.Errorf("offset %d in index %s with base %d: %w", offset, c.f.Name(), c.base, ErrOffsetOverflow)
	}
	return int32(offset - c.base), nil
}

// appendEntry writes entry at the end. REQUIRES: mu held for writing.
func (c *core) appendEntry(entry []byte) error {
	pos := int64(c.entries) * int64(c.entrySize)
	if _, err := c.f.WriteAt(entry, pos); err != nil {
		return fmt.Errorf("write index %s at %d: %w", c.f.Name(), pos, err)
	}
	if c.loaded.Load() {
		c.mem = append(c.mem, entry...)
	}
	copy(c.last, entry)
	c.entries++
	return nil
}

// truncateToEntries keeps the first n entries and zeroes the rest of the
// file (ftruncate down and up, so no stale entry survives a crash).
// REQUIRES: mu held for writing, loaded.
func (c *core) truncateToEntries(n int) error {
	if c.readOnly {
		return fmt.Errorf("truncate %s: %w", c.f.Name(), ErrReadOnly)
	}
	if n >= c.entries {
		return nil
	}
	length := c.fileSize
	if err := c.truncateFile(int64(n * c.entrySize)); err != nil {
		return err
	}
	if err := c.truncateFile(length); err != nil {
		return err
	}
	c.entries = n
	c.mem = c.mem[:n*c.entrySize]
	clear(c.last)
	if n > 0 {
		copy(c.last, c.entryAt(n-1))
	}
	return nil
}

// resize sets the file length to size rounded down to the entry size,
// dropping entries that no longer fit. REQUIRES: mu held for writing.
func (c *core) resize(size int) error {
	if c.readOnly {
		return fmt.Errorf("resize %s: %w", c.f.Name(), ErrReadOnly)
	}
	rounded := roundDown(max(size, 0), c.entrySize)
	if rounded < c.entries*c.entrySize {
		if err := c.loadLocked(); err != nil {
			return err
		}
		if err := c.truncateToEntries(rounded / c.entrySize); err != nil {
			return err
		}
	}
	if int64(rounded) != c.fileSize {
		if err := c.truncateFile(int64(rounded)); err != nil {
			return err
		}
	}
	c.maxEntries = rounded / c.entrySize
	return nil
}

// truncateFile sets the file's length. REQUIRES: mu held for writing.
func (c *core) truncateFile(size int64) error {
	if err := c.f.Truncate(size); err != nil {
		return fmt.Errorf("resize index %s to %d bytes: %w", c.f.Name(), size, err)
	}
	c.fileSize = size
	return nil
}

// Resize sets the capacity to maxBytes rounded down to the entry size
// (zero-filling a larger file); Reset restores this capacity later.
func (c *core) Resize(maxBytes int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.resize(maxBytes); err != nil {
		return err
	}
	if maxBytes > 0 {
		c.maxBytes = roundDown(maxBytes, c.entrySize)
	}
	return nil
}

// TrimToValidSize cuts the file to its entries (on roll and close).
func (c *core) TrimToValidSize() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resize(c.entries * c.entrySize)
}

// Reset drops every entry and restores the capacity of the last open or
// Resize with a positive size, or DefaultMaxBytes if there was none
// (Kafka resets to segment.index.bytes), preallocated with zeros, ready
// for a rebuild; trim it afterwards. It works even when the entries could
// not be read.
func (c *core) Reset() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readOnly {
		return fmt.Errorf("reset %s: %w", c.f.Name(), ErrReadOnly)
	}
	if err := c.truncateFile(0); err != nil {
		return err
	}
	c.entries, c.maxEntries, c.mem, c.loadErr = 0, 0, nil, nil
	clear(c.last)
	c.loaded.Store(true)
	if c.maxBytes == 0 {
		c.maxBytes = roundDown(DefaultMaxBytes, c.entrySize)
	}
	return c.resize(c.maxBytes)
}

// Entries returns the number of entries.
func (c *core) Entries() int { n, _ := c.counts(); return n }

// MaxEntries returns the capacity in entries.
func (c *core) MaxEntries() int { _, capacity := c.counts(); return capacity }

// BaseOffset returns the segment's base offset.
func (c *core) BaseOffset() int64 { return c.base }

// Name returns the file's name.
func (c *core) Name() string { return c.f.Name() }

// SizeBytes returns the bytes of valid entries.
func (c *core) SizeBytes() int64 {
	n, _ := c.counts()
	return int64(n) * int64(c.entrySize)
}

// LoadErr returns the error of the last failed attempt to read the
// entries, if they are still unread; lookups then answer "no entry" so
// that callers scan from the segment start.
func (c *core) LoadErr() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.loadErr
}

// Sync makes the entries durable.
func (c *core) Sync() error {
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("fsync index %s: %w", c.f.Name(), err)
	}
	return nil
}

// Close trims a writable index to its entries (as Kafka's close does) and
// closes the file.
func (c *core) Close() error {
	var err error
	if !c.readOnly {
		err = c.TrimToValidSize()
	}
	if cerr := c.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close index %s: %w", c.f.Name(), cerr)
	}
	return err
}

// Release closes the file without trimming (for an index whose segment is
// being deleted or replaced).
func (c *core) Release() error { return c.f.Close() }
