package testutil

import (
	"fmt"
	"strings"
	"time"

	"github.com/partfs/partfs/internal/mountinfo"
)

// DaemonReadyTimeout bounds how long a `partfs mount` daemon may take to
// serve its mount.
const DaemonReadyTimeout = 30 * time.Second

// FUSEConn returns the FUSE connection (the minor device number fusectl
// names it by) of the mount at dir, read from /proc/self/mountinfo: a
// statfs would hang on a mount whose daemon died before answering INIT.
// ok is false when dir is no FUSE mount point.
func FUSEConn(dir string) (conn string, ok bool) {
	mounts, _ := mountinfo.Read(mountinfo.Self)
	for _, m := range mounts {
		if m.Point == dir && strings.HasPrefix(m.FSType, "fuse") {
			_, minor, _ := strings.Cut(m.Dev, ":")
			return minor, true
		}
	}
	return "", false
}

// IsFUSEMount reports whether dir is a FUSE mount point (FUSEConn).
func IsFUSEMount(dir string) bool {
	_, ok := FUSEConn(dir)
	return ok
}

// WaitServing is the one readiness rule for a `partfs mount` daemon: it
// returns once mnt is a FUSE mount point (that happens at mount(2)) and
// the daemon's log holds its "mounted" line (logged once it serves). It
// fails if exited is closed first or DaemonReadyTimeout passes.
func WaitServing(mnt string, log fmt.Stringer, exited <-chan struct{}) error {
	deadline := time.Now().Add(DaemonReadyTimeout)
	for !IsFUSEMount(mnt) || !strings.Contains(log.String(), "msg=mounted") {
		select {
		case <-exited:
			return fmt.Errorf("partfs mount exited before the mount answered")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mount did not answer in %v", DaemonReadyTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
