package fs

import (
	"errors"
	"fmt"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/partlog"
)

// errEPERM marks refusals that are the filesystem's own (truncating a log,
// writing a read-only view).
var errEPERM = errors.New("operation not permitted")

// toErrno maps an error to the errno of docs/spec.md §8. It is the only place that
// knows the mapping.
func toErrno(err error) syscall.Errno {
	var errno syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.As(err, &errno):
		return errno
	case errors.Is(err, partlog.ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, partlog.ErrInvalid):
		return syscall.EINVAL
	case errors.Is(err, partlog.ErrTooLarge):
		return syscall.EFBIG
	case errors.Is(err, partlog.ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, partlog.ErrExists):
		return syscall.EEXIST
	case errors.Is(err, partlog.ErrNoSpace):
		return syscall.ENOSPC
	case errors.Is(err, partlog.ErrTimeout):
		return syscall.ETIMEDOUT
	case errors.Is(err, partlog.ErrDenied):
		return syscall.EACCES
	case errors.Is(err, partlog.ErrBusy):
		return syscall.EBUSY
	case errors.Is(err, errEPERM):
		return syscall.EPERM
	case errors.Is(err, partlog.ErrCorrupt):
		return syscall.EIO
	}
	return syscall.EIO
}

// fail logs one line for a user-visible error and returns its errno.
func fail(lg *logrus.Entry, op string, err error) syscall.Errno {
	e := toErrno(err)
	lvl := logrus.InfoLevel
	if e == syscall.EIO {
		lvl = logrus.ErrorLevel
	}
	lg.WithFields(logrus.Fields{"op": op, "errno": e.Error()}).WithError(err).Log(lvl, "request failed")
	return e
}

// observe counts a request and its latency in .metrics. Use as
// `defer f.observe("op", time.Now(), &errno)`.
func (f *FS) observe(op string, start time.Time, errno *syscall.Errno) {
	f.opt.Metrics.ObserveOp(op, start, uintptr(*errno))
}

// guard turns a panic in a handler into EIO and a log line. Use as
// `defer guard(lg, "op", &errno)`.
func guard(lg *logrus.Entry, op string, errno *syscall.Errno) {
	if v := recover(); v != nil {
		lg.WithFields(logrus.Fields{"op": op, "panic": fmt.Sprint(v)}).Error("handler panicked\n" + string(debug.Stack()))
		*errno = syscall.EIO
	}
}
