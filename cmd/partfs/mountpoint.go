package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/partfs/partfs/internal/mountinfo"
)

// checkMountpoint says what is wrong with dir as a mount point before
// anything is created or mounted: it must be an existing directory, and
// not a mount whose daemon died.
func checkMountpoint(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return fmt.Errorf("mount point %s is a dead mount (its daemon is gone); clear it with: umount -l %s", dir, dir)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("mount point %s does not exist (create it with: mkdir -p %s)", dir, dir)
	case err != nil:
		return fmt.Errorf("mount point %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("mount point %s is not a directory", dir)
	}
	if src, ok := partfsMountAt(dir, mountinfo.Self); ok {
		return fmt.Errorf("mount point %s is already a partfs mount (of %s); unmount it first: umount %s", dir, src, dir)
	}
	return nil
}

// checkFUSE says what keeps a user other than root from mounting, before
// anything is created: go-fuse mounts through the fusermount helper, which
// opens /dev/fuse with the user's rights. Root mounts directly.
func checkFUSE(dev string) error {
	if os.Geteuid() == 0 {
		return nil
	}
	if err := unix.Access(dev, unix.R_OK|unix.W_OK); err != nil {
		return fmt.Errorf("cannot open %s (%v): a user other than root needs read and write access to it (as root: chmod 0666 %s)", dev, err, dev)
	}
	if _, err3 := exec.LookPath("fusermount3"); err3 != nil {
		if _, err := exec.LookPath("fusermount"); err != nil {
			return errors.New("fusermount3 is missing: a user other than root mounts through it (Debian: apt-get install fuse3)")
		}
	}
	return nil
}

// partfsMountAt reports whether dir is the mount point of a live partfs
// mount in the mount table at path (mountinfo.Read), and its source.
func partfsMountAt(dir, table string) (source string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	mounts, _ := mountinfo.Read(table)
	for _, m := range mounts {
		if m.FSType == "fuse.partfs" && m.Point == abs {
			source, ok = m.Source, true // the last mount on dir is the one seen
		}
	}
	return source, ok
}

// noteDataDir logs that a data directory is new (it is created) or that
// the mount hides what the mount point holds.
func noteDataDir(datadir, mountpoint string, readOnly bool, lg *logrus.Entry) {
	if _, err := os.Stat(datadir); datadir != "" && errors.Is(err, os.ErrNotExist) && !readOnly {
		lg.WithField("datadir", datadir).Info("data directory does not exist; creating a new, empty one")
	}
	if des, err := os.ReadDir(mountpoint); err == nil && len(des) > 0 {
		lg.WithFields(logrus.Fields{"mountpoint": mountpoint, "entries": len(des)}).
			Warn("mount point is not empty; its files are hidden while partfs is mounted")
	}
	if othersMayLink(datadir, "/proc/sys/fs/protected_hardlinks") {
		lg.WithField("datadir", datadir).
			Warn("others may write the data directory and fs.protected_hardlinks is 0: a hard link they place there to a file they do not own would be written as a segment; set fs.protected_hardlinks=1")
	}
}

// othersMayLink says whether an account other than this process's may
// create files in datadir while the kernel lets anyone hard-link any file
// (sysctl file reads "0"). With fs.protected_hardlinks=1, the default, a
// user may link only files they own or may read and write, so a link in
// the data directory reaches nothing its maker could not already change.
func othersMayLink(datadir, sysctl string) bool {
	b, err := os.ReadFile(sysctl)
	if err != nil || strings.TrimSpace(string(b)) != "0" {
		return false
	}
	fi, err := os.Stat(datadir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (fi.Mode().Perm()&0o022 != 0 || int(st.Uid) != os.Geteuid())
}
