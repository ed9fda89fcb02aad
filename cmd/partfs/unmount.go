package main

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// unmountGrace is how long a mount told to stop keeps serving files that
// are still open (it is detached at once, so nothing new is opened)
// before it aborts its FUSE connection: their callers then get ENOTCONN,
// while the requests in flight are finished first (the server's loops end
// only after them, and the store is closed after that).
const unmountGrace = 5 * time.Second

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
// server is done), then aborts connection conn.
func stopServing(srv *fuse.Server, mountpoint, conn string, served <-chan struct{}, lg *logrus.Entry) {
	err := srv.Unmount()
	if err == nil {
		return
	}
	lg.WithError(err).Warn("unmount busy; detaching lazily")
	_ = syscall.Unmount(mountpoint, syscall.MNT_DETACH)
	select {
	case <-served:
		return
	case <-time.After(unmountGrace):
	}
	if conn == "" {
		lg.Warn("files still open and the FUSE connection unknown; serving them until they close")
		return
	}
	lg.WithField("connection", conn).Warn("files still open; aborting the FUSE connection (their callers get ENOTCONN)")
	if err := os.WriteFile("/sys/fs/fuse/connections/"+conn+"/abort", []byte("1"), 0); err != nil {
		lg.WithError(err).Warn("abort failed; serving the open files until they close")
	}
}
