// Package progress reports how far a long job (check, compact, recovery,
// opening or closing many partitions) has got: bytes (or items) done, rate
// and ETA, redrawn in place on a terminal and as plain periodic lines
// otherwise. It owns no job state beyond the counters.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Reporter prints the progress of one job. Add may be called from any
// goroutine; Done prints the final line and stops the printer.
type Reporter struct {
	w        io.Writer
	label    string
	total    int64
	done     atomic.Int64
	start    time.Time
	now      func() time.Time
	terminal bool
	every    time.Duration
	unit     string
	quiet    time.Duration
	printed  atomic.Bool

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// Options tune a Reporter; the zero value is fine.
type Options struct {
	Now      func() time.Time // clock, time.Now by default
	Interval time.Duration    // between lines: 200ms on a terminal, 5s otherwise
	Terminal *bool            // force terminal mode on or off (default: detect w)
	// Unit, if set, counts items of that name ("partitions") instead of
	// bytes.
	Unit string
	// Quiet: a job that ends within this long prints nothing, not even
	// Done's line; the first periodic line comes after it at the earliest.
	Quiet time.Duration
}

// Start begins reporting a job of total bytes (0 if unknown) to w.
func Start(w io.Writer, label string, total int64, opt Options) *Reporter {
	r := &Reporter{w: w, label: label, total: total, now: opt.Now, stop: make(chan struct{}), unit: opt.Unit, quiet: opt.Quiet}
	if r.now == nil {
		r.now = time.Now
	}
	r.terminal = isTerminal(w)
	if opt.Terminal != nil {
		r.terminal = *opt.Terminal
	}
	r.every = opt.Interval
	if r.every == 0 {
		r.every = 5 * time.Second
		if r.terminal {
			r.every = 200 * time.Millisecond
		}
	}
	r.start = r.now()
	r.wg.Add(1)
	go r.loop()
	return r
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Add records n more bytes done. A nil Reporter ignores it.
func (r *Reporter) Add(n int64) {
	if r != nil {
		r.done.Add(n)
	}
}

// Bytes returns the bytes done so far.
func (r *Reporter) Bytes() int64 { return r.done.Load() }

// Stop ends the reporter without a final line.
func (r *Reporter) Stop() {
	r.once.Do(func() {
		close(r.stop)
		r.wg.Wait()
	})
}

// Done stops the reporter and prints the final line with summary appended.
// A nil Reporter ignores it.
func (r *Reporter) Done(summary string) {
	if r == nil {
		return
	}
	r.once.Do(func() {
		close(r.stop)
		r.wg.Wait()
		if !r.printed.Load() && r.now().Sub(r.start) < r.quiet {
			return
		}
		line := r.Line()
		if summary != "" {
			line += "; " + summary
		}
		if r.terminal {
			fmt.Fprintf(r.w, "\r\033[K%s\n", line)
		} else {
			fmt.Fprintln(r.w, line)
		}
	})
}

func (r *Reporter) loop() {
	defer r.wg.Done()
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			if r.now().Sub(r.start) < r.quiet {
				continue
			}
			r.printed.Store(true)
			if r.terminal {
				fmt.Fprintf(r.w, "\r\033[K%s", r.Line())
			} else {
				fmt.Fprintln(r.w, r.Line())
			}
		}
	}
}

// Line renders the current state: "label: 12.0 MiB of 40.0 MiB (30%), 80.0 MiB/s, ETA 0s".
func (r *Reporter) Line() string {
	done := r.done.Load()
	elapsed := r.now().Sub(r.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	if r.total <= 0 {
		return fmt.Sprintf("%s: %s, %s/s, %s elapsed", r.label, r.amount(done), r.amount(int64(rate)), elapsed.Round(time.Second))
	}
	pct := float64(done) * 100 / float64(r.total)
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(r.total-done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%s: %s of %s (%.0f%%), %s/s, ETA %s", r.label, r.amount(done), r.amount(r.total), pct, r.amount(int64(rate)), eta)
}

// amount formats n bytes, or n items with a unit.
func (r *Reporter) amount(n int64) string {
	if r.unit != "" {
		return fmt.Sprintf("%d %s", n, r.unit)
	}
	return Bytes(n)
}

// Bytes formats n in binary units.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
