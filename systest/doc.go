// Package systest is partfs's system-level fault suite (issue 6): it drives
// the real `partfs` binary and the real data directory through crashes
// (SIGKILL of the mount daemon), damaged files, a full disk, hostile input
// and load, and checks that nothing acknowledged is lost and nothing corrupt
// is served. It owns no production code; everything lives in its tests.
//
// The binary is built once per test run (TestMain, `go build ./cmd/partfs`).
// Tests that need FUSE skip only when /dev/fuse is missing and CI is unset;
// the disk-full tests need root (they mount a size-limited tmpfs).
//
// Environment:
//
//	PARTFS_SYSTEST_LONG=1   long runs: crash loop >= 100 iterations (or
//	                        PARTFS_CRASH_ITERS), 10,000 topics, 5 minutes of
//	                        load (or PARTFS_LOAD_SECONDS)
//	PARTFS_CRASH_ITERS=N    crash-loop iterations (default: as many as fit in
//	                        ~3 minutes, at least 20; long: at least 100)
//	PARTFS_LOAD_SECONDS=N   load-test duration (default 60; long: 300)
//	PARTFS_TOPICS=N         topics created by the hostile sweep (default
//	                        2,000; long: 10,000)
//	PARTFS_SYSTEST_KEEP=1   keep the data directories of failed runs and log
//	                        their paths
//
// Run it all with `go test ./systest/` (about 10 minutes) or, long,
// `PARTFS_SYSTEST_LONG=1 go test -timeout 0 ./systest/`.
package systest
