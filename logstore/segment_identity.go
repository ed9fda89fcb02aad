package logstore

import (
	"fmt"
	"os"
	"syscall"

	"github.com/partfs/partfs/partlog"
)

// fileID is a segment file's identity as the kernel knows it (zero for a
// file that is not an operating-system file).
type fileID struct{ dev, ino uint64 }

// linked returns fi's identity and link count (1 when unknown).
func linked(fi os.FileInfo) (fileID, uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 1
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, uint64(st.Nlink)
}

// identOf is the identity of an open file (zero if it cannot be stat-ed).
func identOf(f interface{ Stat() (os.FileInfo, error) }) fileID {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}
	}
	id, _ := linked(fi)
	return id
}

// checkUnchanged fails when the active segment's file is no longer the one
// the log wrote: another size (truncated or grown by another process),
// another file under its name (a descriptor reopened after a rename or
// copy over it), or a file with no name or a second one. One fstat;
// nothing is read. REQUIRES: mu held.
func (l *Log) checkUnchanged() error {
	a := l.active()
	if a.ident == (fileID{}) && a.readOnlyPlaceholder() {
		return nil
	}
	fi, err := a.log.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w: %w", a.path, partlog.ErrCorrupt, err)
	}
	id, links := linked(fi)
	switch {
	case fi.Size() != a.size:
		return fmt.Errorf("%s: %w: it has %d bytes, the log wrote %d: changed by another process", a.path, partlog.ErrCorrupt, fi.Size(), a.size)
	case a.ident != (fileID{}) && id != a.ident:
		return fmt.Errorf("%s: %w: another file (inode %d) has its name, the log wrote inode %d", a.path, partlog.ErrCorrupt, id.ino, a.ident.ino)
	case links != 1:
		return fmt.Errorf("%s: %w: the file has %d names, the log wrote it with one", a.path, partlog.ErrCorrupt, links)
	}
	return nil
}

// readOnlyPlaceholder reports the in-memory segment of an empty read-only log.
func (s *segment) readOnlyPlaceholder() bool {
	_, ok := s.log.(emptyFile)
	return ok
}

// refuseChanged checks the active segment before an append or a flush is
// acknowledged: a changed file makes the error sticky (the partition takes
// no more appends and leaves no clean state behind: its next open
// recovers), with a log line. REQUIRES: mu held.
func (l *Log) refuseChanged() error {
	err := l.checkUnchanged()
	if err == nil {
		return nil
	}
	l.werr = err
	l.logger.WithError(err).Error("a segment changed under the mount: the partition refuses appends and flushes; the next mount recovers it")
	return err
}
