package logstore

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partfs/partfs/progress"
)

// partitionWorkers is how many partitions Open and Close work on at once:
// the work is mostly waiting for the disk (fsync, metadata), so more than
// one per core.
func partitionWorkers() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

// eachPartition runs f(i) for every i in [0, n) on partitionWorkers
// goroutines and returns the errors by i. When w is not nil and the job
// takes more than a second, it reports the partitions done under label.
func eachPartition(n int, w io.Writer, label string, f func(i int) error) []error {
	errs := make([]error, n)
	var prog *progress.Reporter
	if w != nil && n > 0 {
		prog = progress.Start(w, label, int64(n), progress.Options{Unit: "partitions", Quiet: time.Second})
		defer prog.Done("done")
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(partitionWorkers(), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = f(i)
				prog.Add(1)
			}
		}()
	}
	wg.Wait()
	return errs
}
