package fs

import (
	"os"
	"sync"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/partfs/partfs/partlog"
)

// passthrough is whether files of segments/ are handed to the kernel
// (FUSE passthrough: reads go from the kernel to the data directory's
// file, not through the daemon), and the notes logged once per mount
// about where they are not.
type passthrough struct {
	on      atomic.Bool
	noFD    sync.Once // a backend file without a descriptor
	refused sync.Once // the kernel sent a read of a passthrough open
}

// probe asks the kernel to take a backing file (an empty memfd) and lets
// it go again: it refuses without passthrough support (Linux < 6.9), when
// the mount did not negotiate it, or without CAP_SYS_ADMIN. It logs the
// outcome once.
func (pt *passthrough) probe(srv *fuse.Server, off bool, lg *logrus.Entry) {
	if off {
		lg.Info("segments/ files are read through the daemon: passthrough is off for this mount")
		return
	}
	fd, err := unix.MemfdCreate("partfs-passthrough-probe", unix.MFD_CLOEXEC)
	if err != nil {
		lg.WithError(err).Info("segments/ files are read through the daemon: no memfd to probe kernel passthrough with")
		return
	}
	defer unix.Close(fd)
	id, errno := srv.RegisterBackingFd(&fuse.BackingMap{Fd: int32(fd)})
	if errno != 0 {
		lg.WithError(errno).Info("segments/ files are read through the daemon: the kernel refuses FUSE passthrough (it needs Linux 6.9 and CAP_SYS_ADMIN)")
		return
	}
	if errno := srv.UnregisterBackingFd(id); errno != 0 {
		lg.WithError(errno).Warn("releasing the passthrough probe's backing file")
	}
	pt.on.Store(true)
	lg.Info("segments/ files are read through kernel passthrough")
}

// file returns a descriptor of sf for the kernel when passthrough is on
// and the backend has one (partlog.SegmentFileDuper), else nil: the open
// is then served through the daemon.
func (pt *passthrough) file(sf partlog.SegmentFile, lg *logrus.Entry) *os.File {
	if !pt.on.Load() {
		return nil
	}
	d, ok := sf.(partlog.SegmentFileDuper)
	var err error
	var f *os.File
	if ok {
		f, err = d.DupFile()
	}
	if f == nil {
		pt.noFD.Do(func() {
			lg.WithError(err).Info("a segments/ file without a descriptor for passthrough is read through the daemon (logged once)")
		})
	}
	return f
}

// readRefused notes a read that reached the daemon through an open handed
// to the kernel for passthrough: the kernel did not take the file (go-fuse
// then stops asking), so later opens are served through the daemon.
func (pt *passthrough) readRefused(lg *logrus.Entry) {
	pt.refused.Do(func() {
		pt.on.Store(false)
		lg.Warn("the kernel did not take a segments/ file for passthrough; segments/ files are read through the daemon from now on")
	})
}
