package logstore

import (
	"io"
	"time"

	"github.com/partfs/partfs/internal/parallel"
	"github.com/partfs/partfs/progress"
)

// eachPartition runs f(i) for every i in [0, n) on parallel.Workers
// goroutines and returns the errors by i. When w is not nil and the job
// takes more than a second, it reports the partitions done under label.
func eachPartition(n int, w io.Writer, label string, f func(i int) error) []error {
	errs := make([]error, n)
	var prog *progress.Reporter
	if w != nil && n > 0 {
		prog = progress.Start(w, label, int64(n), progress.Options{Unit: "partitions", Quiet: time.Second})
		defer prog.Done("done")
	}
	parallel.Each(n, func(i int) {
		errs[i] = f(i)
		prog.Add(1)
	})
	return errs
}
