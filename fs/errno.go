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

// errnos is the errno of docs/spec.md §8 for each error the backends and
// fs return, in the order toErrno tries them. It is the only place that
// knows the mapping.
var errnos = []struct {
	err   error
	errno syscall.Errno
}{
	{partlog.ErrNotFound, syscall.ENOENT},
	{partlog.ErrInvalid, syscall.EINVAL},
	{partlog.ErrTooLarge, syscall.EFBIG},
	{partlog.ErrReadOnly, syscall.EROFS},
	{partlog.ErrExists, syscall.EEXIST},
	{partlog.ErrNoSpace, syscall.ENOSPC},
	{partlog.ErrTimeout, syscall.ETIMEDOUT},
	{partlog.ErrDenied, syscall.EACCES},
	{partlog.ErrBusy, syscall.EBUSY},
	{errEPERM, syscall.EPERM},
	{partlog.ErrCorrupt, syscall.EIO},
}

// toErrno maps an error to its errno: an errno it wraps, else the first of
// errnos it matches, else EIO.
func toErrno(err error) syscall.Errno {
	var errno syscall.Errno
	if err == nil {
		return 0
	}
	if errors.As(err, &errno) {
		return errno
	}
	for _, m := range errnos {
		if errors.Is(err, m.err) {
			return m.errno
		}
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
