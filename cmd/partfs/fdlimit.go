package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"
)

// raiseFDLimit lifts the open-file limit as far as this process may (root
// with CAP_SYS_RESOURCE up to fs.nr_open; others to their hard limit, as
// Go's runtime already does). Segment files beyond the budget this leaves
// are closed and reopened on demand (vfs.BudgetFS), so a low limit costs
// reopens, not errors.
func raiseFDLimit(lg *logrus.Entry) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	want := nrOpen()
	if want > lim.Max {
		next := syscall.Rlimit{Cur: want, Max: want}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err == nil {
			lim = next
		}
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	lg.WithField("open_files", lim.Cur).Debug("open-file limit")
	if lim.Cur < 4096 {
		lg.WithField("open_files", lim.Cur).Warn("low open-file limit: segment files will be reopened often; raise `ulimit -n` for many partitions")
	}
}

// nrOpen is the kernel's ceiling for a process's open-file limit.
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
