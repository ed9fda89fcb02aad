package main

import (
	"fmt"
	"path/filepath"

	bu "github.com/partfs/partfs/bench/internal/benchutil"
)

// segmentsRead: `cat segments/*.log > /dev/null` against `cat` of the same
// files in the data directory, page cache warm (both read once first),
// in alternating rounds; the ratio is the data directory's time over the
// mount's (1 = as fast as the files themselves).
func segmentsRead(mnt, data string) {
	direct := filepath.Join(data, "t-0") + "/*.log"
	mounted := mnt + "/t/0/segments/*.log"
	files, _ := filepath.Glob(direct)
	var size int64
	for _, f := range files {
		size += bu.FileSize(f)
	}
	bu.Sh("cat " + direct + " > /dev/null; cat " + mounted + " > /dev/null")
	var dm, mm, ratio []float64
	for i := 0; i < bu.Rounds(); i++ {
		d := bu.Sh("cat " + direct + " > /dev/null")
		m := bu.Sh("cat " + mounted + " > /dev/null")
		dm, mm, ratio = append(dm, bu.MBps(size, d)), append(mm, bu.MBps(size, m)), append(ratio, d.Seconds()/m.Seconds())
	}
	fmt.Printf("%-44s %8.0f MB/s  %.2fx of cat in the data directory (%.0f MB/s; target >= 0.8x)\n",
		"partfs: cat segments/*.log > /dev/null", bu.Median(mm), bu.Median(ratio), bu.Median(dm))
}

// rereadLog: a first `cat log > /dev/null` on a fresh read-only mount (nothing of
// the file in the kernel's cache) against a second one of the unchanged
// file, in alternating rounds; the ratio is the first's time over the
// second's (target >= 2x).
func rereadLog(mnt, data string) {
	log := mnt + "/t/0/log"
	var first, second, ratio []float64
	for i := 0; i < bu.Rounds(); i++ {
		cmd := mountPartfs(data, mnt, "--read-only") // only a read-only mount caches
		size := bu.FileSize(log)
		a := bu.Sh("cat " + log + " > /dev/null")
		b := bu.Sh("cat " + log + " > /dev/null")
		cmd.Stop()
		first, second, ratio = append(first, bu.MBps(size, a)), append(second, bu.MBps(size, b)), append(ratio, a.Seconds()/b.Seconds())
	}
	fmt.Printf("%-44s %8.0f MB/s  %.2fx of the first read (%.0f MB/s; target >= 2x)\n",
		"partfs: second cat log, read-only mount", bu.Median(second), bu.Median(ratio), bu.Median(first))
}
