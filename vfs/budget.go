package vfs

import "syscall"

// OpenFileBudget is how many files a BudgetFS may keep open in this
// process: the soft RLIMIT_NOFILE less a reserve of a quarter of it (at
// least 256) for everything else (FUSE, sockets, checkpoints written with
// plain descriptors, the lock file), and at least 64.
func OpenFileBudget() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 64
	}
	return budgetFor(lim.Cur)
}

func budgetFor(soft uint64) int {
	const most = 1 << 30
	n := int(min(soft, most))
	return max(n-max(n/4, 256), 64)
}
