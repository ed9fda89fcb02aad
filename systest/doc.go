// Package systest is partfs's system-level fault suite: it drives
// the real `partfs` binary and real data directories through crashes
// (SIGKILL of the mount daemon), damaged files, a full disk, hostile input
// and load, and checks that nothing acknowledged is lost and nothing corrupt
// is served. It owns no production code; everything lives in its tests.
//
//	TestCrashLoop          concurrent appenders (plain and jsonl, 6 partitions,
//	                       5 codecs, small segments) plus a compacted keyed
//	                       topic with a fast cleaner; SIGKILL at a random
//	                       moment (sometimes again right after the remount);
//	                       every acknowledged write() once, writes atomic,
//	                       offsets contiguous (except compaction), latest value
//	                       per key, stat's end offset; clean stop, partfs check,
//	                       no temporary files
//	TestDamageTable        23 damages to an unmounted data directory: partfs
//	                       check names file and position; logstore and the
//	                       real mount recover what Kafka would, serve only
//	                       written bytes, EIO + a log line saying where
//	TestDiskFull*          8 MiB tmpfs: ENOSPC, no partial batch, the mount
//	                       stays up, a crash on the full disk, appends again
//	                       after space returns (logstore and through the mount)
//	TestHostileSweep       docs/spec.md path forms, refused writes, config lines,
//	                       random and deeply nested JSON, names at and past
//	                       the limits: the errno of docs/spec.md, nothing changed, no fd or
//	                       thread growth (go_goroutines too if .metrics has it)
//	TestHugeLine, TestReadOnlyMount, TestSecondMountRefused, TestManyTopics
//	TestLoad               4 writers + 4 `tail -f` readers; lines/s, RSS
//
// The binary is built once per test run (TestMain). Tests that need FUSE
// skip only when /dev/fuse is missing and CI is unset; the disk-full tests
// need root (they mount a size-limited tmpfs). Mount points are found in
// /proc/self/mountinfo and dead ones detached lazily, never statfs'ed (a
// mount whose daemon died before FUSE INIT hangs every access).
//
// Environment:
//
//	PARTFS_SYSTEST_LONG=1   long runs: crash loop of 100 iterations (or
//	                        PARTFS_CRASH_ITERS), 10,000 topics, 5 minutes of
//	                        load
//	PARTFS_CRASH_ITERS=N    exactly N crash-loop iterations (thousands are
//	                        fine: the data directory is renewed every 10);
//	                        default: as many as fit in 3 minutes (at most a
//	                        quarter of go test's remaining -timeout), >= 20
//	PARTFS_LOAD_SECONDS=N   load-test duration (default 60; long 300)
//	PARTFS_TOPICS=N         topics made by TestManyTopics (default 2,000;
//	                        long 10,000)
//
// `go test ./systest/` takes about 6.5 minutes on 2 cores; the long run is
// `PARTFS_SYSTEST_LONG=1 go test -timeout 0 ./systest/`.
package systest
