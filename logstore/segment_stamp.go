package logstore

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileStamp is the partlog.Segment.Stamp of the segment file at path, as
// fi describes it: a hash of its device, inode number and birth time (the
// change time where the filesystem keeps no birth time), which a file
// keeps while it grows and is renamed, and a file written anew (a cleaned
// segment) never shares with the one it replaces, even on a reused inode.
// 0 for a file that is not an operating-system file.
func fileStamp(fi os.FileInfo, path string) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	born := st.Ctim
	var sx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &sx); err == nil &&
		sx.Mask&unix.STATX_BTIME != 0 && sx.Ino == st.Ino {
		born = syscall.Timespec{Sec: sx.Btime.Sec, Nsec: int64(sx.Btime.Nsec)}
	} else if err == nil && sx.Ino != st.Ino {
		return 0 // the name moved on to another file since fi
	}
	h := fnv.New64a()
	var b [32]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(st.Dev))
	binary.LittleEndian.PutUint64(b[8:], st.Ino)
	binary.LittleEndian.PutUint64(b[16:], uint64(born.Sec))
	binary.LittleEndian.PutUint64(b[24:], uint64(born.Nsec))
	h.Write(b[:])
	return max(h.Sum64(), 1)
}

// openStamp is fileStamp of an open segment file (0 if it cannot be stat-ed).
func openStamp(f interface{ Stat() (os.FileInfo, error) }, path string) uint64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fileStamp(fi, path)
}
