package kafkalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"syscall"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// A sidecar is kept in the cache directory as the file
// <topic>-<partition>.<name>, framed so that a file that is damaged, cut
// short, left by another topic of the same name or copied from another
// partition is recognised:
//
//	"pfkc2\n" topic-id[16] crc32c(topic-id, partition[4], data)[4] data
//
// (the partition big-endian; a "pfkc1\n" file, whose sum left the
// partition out, is discarded as any file not of this partition).
// The cache directory is reached only through vfs.Beneath: no name leads
// out of it or through a symbolic link.
const (
	cacheMagic   = "pfkc2\n"
	cacheHeader  = len(cacheMagic) + 16 + 4
	maxCacheFile = 256 << 20
)

var errCacheFile = errors.New("not a cache file of this partition (damaged, cut short, or of another topic or partition)")

// sidecarName is where sidecar name of this partition lives in the cache
// directory.
func (l *Log) sidecarName(name string) string {
	return filepath.Join(l.s.opt.CacheDir, fmt.Sprintf("%s-%d.%s", l.topic, l.part, name))
}

// topicID is the partition's topic ID as metadata gave it (zero when
// unknown).
func (l *Log) topicID() [16]byte {
	if tm := l.s.cached(l.topic); tm != nil {
		return tm.id
	}
	return [16]byte{}
}

func frameCache(id [16]byte, part int32, data []byte) []byte {
	b := make([]byte, 0, cacheHeader+len(data))
	b = append(append([]byte(cacheMagic), id[:]...), 0, 0, 0, 0)
	b = append(b, data...)
	binary.BigEndian.PutUint32(b[len(cacheMagic)+16:], cacheSum(id, part, data))
	return b
}

func cacheSum(id [16]byte, part int32, data []byte) uint32 {
	sum := crc32.Update(crc32.Checksum(id[:], castagnoli), castagnoli, binary.BigEndian.AppendUint32(nil, uint32(part)))
	return crc32.Update(sum, castagnoli, data)
}

// unframeCache returns the data of a cache file of partition part of
// topic id.
func unframeCache(id [16]byte, part int32, b []byte) ([]byte, error) {
	if len(b) < cacheHeader || string(b[:len(cacheMagic)]) != cacheMagic || !bytes.Equal(b[len(cacheMagic):len(cacheMagic)+16], id[:]) {
		return nil, errCacheFile
	}
	data := b[cacheHeader:]
	if binary.BigEndian.Uint32(b[cacheHeader-4:]) != cacheSum(id, part, data) {
		return nil, errCacheFile
	}
	return data, nil
}

// LoadSidecar reads a sidecar from the cache directory. A file that cannot
// be read or is not a whole cache file of this partition is discarded
// with a log line (ErrNotFound: the caller computes it again).
func (l *Log) LoadSidecar(name string) ([]byte, error) {
	if err := checkSidecarName(name); err != nil {
		return nil, err
	}
	path := l.sidecarName(name)
	b, err := l.readCache(path)
	if err == nil {
		b, err = unframeCache(l.topicID(), l.part, b)
	}
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			l.s.opt.Logger.WithError(err).WithField("file", path).Warn("cache file discarded")
		}
		return nil, fmt.Errorf("sidecar %s of %s-%d: %w", name, l.topic, l.part, partlog.ErrNotFound)
	}
	return b, nil
}

// readCache reads a regular file of at most maxCacheFile bytes (O_NONBLOCK:
// a FIFO of that name does not block the open).
func (l *Log) readCache(path string) ([]byte, error) {
	f, err := l.s.cache.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Size() > maxCacheFile:
		return nil, fmt.Errorf("larger than %d bytes", maxCacheFile)
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if n == len(b) {
		return b, nil
	}
	return nil, fmt.Errorf("read %d of %d bytes: %w", n, len(b), err)
}

// SaveSidecar writes a sidecar to the cache directory durably.
func (l *Log) SaveSidecar(name string, data []byte) error {
	if err := checkSidecarName(name); err != nil {
		return err
	}
	if l.s.opt.ReadOnly {
		return fmt.Errorf("sidecar %s of %s-%d: %w", name, l.topic, l.part, partlog.ErrReadOnly)
	}
	if err := l.saveCache(name, data); err != nil {
		return err
	}
	// fs saves its sidecars now and then and at unmount: the tiles'
	// prints go with them
	return l.savePrints()
}

// checkSidecarName is partlog's rule, and keeps the name of the tiles'
// prints for this package.
func checkSidecarName(name string) error {
	if name == printsName {
		return fmt.Errorf("sidecar name %q is kafkalog's own: %w", name, partlog.ErrInvalid)
	}
	return partlog.CheckSidecarName(name)
}

// saveCache writes data framed as the cache file name of this partition.
func (l *Log) saveCache(name string, data []byte) error {
	return vfs.WriteFileDurable(l.s.cache, l.sidecarName(name), frameCache(l.topicID(), l.part, data))
}
