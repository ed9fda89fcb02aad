package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/sirupsen/logrus"
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
	return nil
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
}
