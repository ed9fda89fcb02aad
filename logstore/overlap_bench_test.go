package logstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/partfs/partfs/record"
)

// BenchmarkAppendOverlap measures what overlapping an append's encoding
// with its write reaches on this machine, for a pipelined append:
// benchAppend's 1,000 records encoded as overlapParts batches, each but
// the last handed over a channel to a writer goroutine as soon as it is
// encoded (its write(2) overlapping the encoding of the next), the last
// written by the encoder once the writer has acknowledged the others.
// Rounds of appendRound such appends alternate with rounds of the same
// appends encoded, then written in one write(2) (as Log.Append does), and
// with plain write(2) of the same bytes, all to plain files in benchDir.
// x-overlap and x-sequential are the medians of plain time over each
// one's; with a core idle and writes that scaled, x-overlap would near 1.
func BenchmarkAppendOverlap(b *testing.B) {
	rs := benchRecords(1000)
	dir := benchDir(b)
	var enc record.Encoder
	per := len(rs) / overlapParts
	encodeAll := func(dst []byte, parted func(dst []byte)) []byte {
		for k := 0; k < overlapParts; k++ {
			dst, _ = enc.AppendBatch(dst, int64(k*per), rs[k*per:(k+1)*per], record.BatchOptions{})
			if parted != nil && k < overlapParts-1 {
				parted(dst)
			}
		}
		return dst
	}
	chunk := encodeAll(nil, nil)
	buf := make([]byte, 0, 2*len(chunk))
	plainFile, seqFile := benchFile(b, dir, "plain"), benchFile(b, dir, "seq")
	w := startPartWriter(b, benchFile(b, dir, "overlap"))
	defer w.stop()
	var xo, xs []float64
	b.ResetTimer()
	for done := 0; done < b.N; done += appendRound {
		n := min(appendRound, b.N-done)
		p := timeRuns(func() { write(b, plainFile, chunk) }, n)
		s := timeRuns(func() { buf = encodeAll(buf[:0], nil); write(b, seqFile, buf) }, n)
		o := timeRuns(func() {
			from := 0
			buf = encodeAll(buf[:0], func(dst []byte) { w.parts <- dst[from:]; from = len(dst) })
			for k := 1; k < overlapParts; k++ {
				<-w.acks
			}
			write(b, w.f, buf[from:])
		}, n)
		xo, xs = append(xo, p.Seconds()/o.Seconds()), append(xs, p.Seconds()/s.Seconds())
	}
	b.StopTimer()
	b.ReportMetric(median(xo), "x-overlap")
	b.ReportMetric(median(xs), "x-sequential")
}

// overlapParts is how many batches BenchmarkAppendOverlap cuts an append
// into (the writer gets all but the last).
const overlapParts = 4

// benchFile creates a file in dir, closed and removed when the benchmark
// ends.
func benchFile(b *testing.B, dir, name string) *os.File {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
	return f
}

// write writes p to f.
func write(b *testing.B, f *os.File, p []byte) {
	if _, err := f.Write(p); err != nil {
		b.Fatal(err)
	}
}

// partWriter writes to f, in order, the parts sent to it, acknowledging
// each once written.
type partWriter struct {
	b     *testing.B
	f     *os.File
	parts chan []byte
	acks  chan struct{}
	errs  chan error
}

// startPartWriter starts a partWriter of f.
func startPartWriter(b *testing.B, f *os.File) *partWriter {
	w := &partWriter{b: b, f: f, parts: make(chan []byte, overlapParts), acks: make(chan struct{}, overlapParts), errs: make(chan error, 1)}
	go func() {
		var err error
		for p := range w.parts {
			if _, e := f.Write(p); e != nil && err == nil {
				err = e
			}
			w.acks <- struct{}{}
		}
		w.errs <- err
	}()
	return w
}

// stop ends the writer, failing b if a write failed.
func (w *partWriter) stop() {
	close(w.parts)
	if err := <-w.errs; err != nil {
		w.b.Error(err)
	}
}
