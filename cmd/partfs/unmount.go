package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// unmountGrace is how long a mount told to stop keeps serving files that
// are still open, short enough that the whole unmount ends within 5 s (it
// is detached at once, so nothing new is opened)
// before it aborts its FUSE connection: their callers then get ENOTCONN,
// while the requests in flight are finished first (the server's loops end
// only after them, and the store is closed after that).
const unmountGrace = 2 * time.Second

// fusectlDir is where the fusectl filesystem is looked for first
// (PARTFS_FUSECTL_DIR overrides it, so tests can act as a machine where it
// is not mounted). Where it is not mounted, the daemon mounts fusectl on a
// directory of its own for the abort and unmounts it after.
func fusectlDir() string {
	if d := os.Getenv("PARTFS_FUSECTL_DIR"); d != "" {
		return d
	}
	return "/sys/fs/fuse/connections"
}

// fuseConn is the fusectl connection number of the mount at dir (the
// minor of its device), "" if unknown.
func fuseConn(dir string) string {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return ""
	}
	return strconv.FormatUint(uint64(unix.Minor(st.Dev)), 10)
}

// stopServing unmounts; with files still open it detaches the mount,
// waits up to unmountGrace for them to close (served closes when the
// server is done), then aborts connection conn. It returns false when it
// could not abort: the caller then closes the store and exits, and the
// kernel aborts the connection when the process's /dev/fuse closes.
func stopServing(srv *fuse.Server, mountpoint, conn string, served <-chan struct{}, lg *logrus.Entry) bool {
	err := srv.Unmount()
	if err == nil {
		return true
	}
	lg.WithError(err).Warn("unmount busy; detaching lazily")
	_ = syscall.Unmount(mountpoint, syscall.MNT_DETACH)
	select {
	case <-served:
		return true
	case <-time.After(unmountGrace):
	}
	lg = lg.WithField("connection", conn)
	if conn == "" {
		lg.Warn("files still open and the FUSE connection unknown")
		return false
	}
	lg.Warn("files still open; aborting the FUSE connection (their callers get ENOTCONN)")
	if err := abortConn(conn); err != nil {
		lg.WithError(err).Warn("abort through fusectl failed")
		return false
	}
	return true
}

// abortConn writes to fusectl's abort file of connection conn, mounting
// fusectl on a temporary directory first where it is not mounted.
func abortConn(conn string) error {
	dir := fusectlDir()
	if _, err := os.Stat(filepath.Join(dir, conn, "abort")); err != nil {
		tmp, err := os.MkdirTemp("", "partfs-fusectl-")
		if err != nil {
			return err
		}
		defer os.Remove(tmp)
		if err := unix.Mount("fusectl", tmp, "fusectl", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return &os.PathError{Op: "mount fusectl", Path: tmp, Err: err}
		}
		defer unix.Unmount(tmp, unix.MNT_DETACH)
		dir = tmp
	}
	return os.WriteFile(filepath.Join(dir, conn, "abort"), []byte("1"), 0)
}
