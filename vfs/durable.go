package vfs

import (
	"fmt"
	"path/filepath"
)

// WriteFileDurable replaces name with data so that after a crash the file
// holds either its old or its new contents: it writes name+".tmp", fsyncs
// it, renames it over name and fsyncs the directory (Kafka's
// atomicMoveWithFallback, prometheus' fileutil.Rename).
func WriteFileDurable(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	if err := writeSynced(fs, tmp, data); err != nil {
		fs.Remove(tmp) //nolint:errcheck // best effort cleanup
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		fs.Remove(tmp) //nolint:errcheck // best effort cleanup
		return fmt.Errorf("rename %s to %s: %w", tmp, name, err)
	}
	if err := fs.SyncDir(filepath.Dir(name)); err != nil {
		return fmt.Errorf("sync directory of %s: %w", name, err)
	}
	return nil
}

// WriteFileAtomic replaces name with data as WriteFileDurable does but
// without an fsync: the file holds its old or its new contents once the
// filesystem is synced (SyncAll), which the caller does before anything
// relies on it.
func WriteFileAtomic(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	if err := writeFileSyncing(fs, tmp, data, false); err != nil {
		fs.Remove(tmp) //nolint:errcheck // best effort cleanup
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		fs.Remove(tmp) //nolint:errcheck // best effort cleanup
		return fmt.Errorf("rename %s to %s: %w", tmp, name, err)
	}
	return nil
}

func writeSynced(fs FS, name string, data []byte) error {
	return writeFileSyncing(fs, name, data, true)
}

func writeFileSyncing(fs FS, name string, data []byte, sync bool) error {
	f, err := fs.Create(name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("fsync %s: %w", name, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}
