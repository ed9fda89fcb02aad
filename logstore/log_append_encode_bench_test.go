package logstore

import (
	"testing"
	"time"

	"github.com/partfs/partfs/record"
)

// BenchmarkAppendMiB appends 1 MiB writes of 100-byte lines without
// timestamps, as records (Append) and as the text the fs gets from `cat`
// into a log file (AppendLines): the write is over max.message.bytes once
// framed, so it takes two batches. The baseline is write(2) of the same
// value bytes to plain files, in alternating rounds (alternateAppends).
func BenchmarkAppendMiB(b *testing.B) {
	for _, codec := range []string{"none", "lz4"} {
		b.Run(codec, func(b *testing.B) { benchAppendMiB(b, codec, false) })
		b.Run(codec+"/lines", func(b *testing.B) { benchAppendMiB(b, codec, true) })
	}
}

func benchAppendMiB(b *testing.B, codec string, lines bool) {
	dir, l := appendLog(b, codec)
	src := benchRecords((1 << 20) / 101)
	rs := make([]record.Record, len(src))
	var chunk []byte
	for i := range src {
		rs[i] = record.Record{Value: src[i].Value[:100]}
		chunk = append(append(chunk, rs[i].Value...), '\n')
	}
	alternateAppends(b, l, dir, len(chunk), chunk, func() error {
		if lines {
			_, _, err := l.AppendLines(chunk)
			return err
		}
		_, err := l.Append(rs)
		return err
	}, nil)
}

// BenchmarkPlanBatches measures the size plan of a 1 MiB write of 100-byte
// lines; the baseline is encoding the same records once (uncompressed).
func BenchmarkPlanBatches(b *testing.B) {
	src := benchRecords((1 << 20) / 101)
	var l Log
	var enc record.Encoder
	buf, _ := enc.AppendBatch(nil, 0, src, record.BatchOptions{})
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		l.planBatches(src, 1048588, 0)
	}
	plan := b.Elapsed()
	b.StopTimer()
	var encode time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		buf, _ = enc.AppendBatch(buf[:0], 0, src, record.BatchOptions{})
		encode += time.Since(start)
	}
	b.ReportMetric(plan.Seconds()/encode.Seconds(), "x-encode-time")
}
