package logstore

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/partfs/partfs/compression"
	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/internal/crc32c"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// benchRecords returns n records with 120-byte values of mixed text.
func benchRecords(n int) []record.Record {
	rs := make([]record.Record, n)
	rng := rand.New(rand.NewSource(1))
	words := []string{"alpha ", "beta ", "gamma ", "delta ", "order=", "user=", "42 ", "ok "}
	for i := range rs {
		v := make([]byte, 0, 120)
		for len(v) < 120 {
			v = append(v, words[rng.Intn(len(words))]...)
		}
		rs[i] = record.Record{Timestamp: 1_764_410_400_000 + int64(i), Value: v[:120]}
	}
	return rs
}

func BenchmarkAppend(b *testing.B) {
	for _, codec := range []string{"none", "lz4"} {
		b.Run(codec, func(b *testing.B) { benchAppend(b, codec) })
	}
}

// benchDir is where benchmarks write: $PARTFS_BENCH_DIR (e.g. /dev/shm to
// take the disk's writeback out of the numbers) or a test temp dir.
func benchDir(b *testing.B) string {
	if d := os.Getenv("PARTFS_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// appendLog opens a store in benchDir with partition t-0 compressed with
// codec, closed when the benchmark ends.
func appendLog(b *testing.B, codec string) (string, *Log) {
	dir := benchDir(b)
	st, l := openAt(b, dir, Options{NoBackground: true, Defaults: map[string]string{"compression.type": codec}})
	b.Cleanup(func() { st.Close() })
	return dir, l
}

// benchAppend appends batches of 1,000 records, in rounds of
// appendRound appends alternating with a round of write(2) calls of the
// same bytes to a plain file (one write per append of what the append
// wrote to its segment: for lz4 the compressed batch), which starts a new
// file where the log rolls its segment. x-plain-write is the median of the
// rounds' ratios (plain time over ours); MB/s counts the uncompressed
// batches, diskMB/s what the log wrote. x-write-encode is the ceiling of
// x-plain-write for an append that encodes its batch and then writes it:
// the plain round's time over itself plus a round of encoding the same
// records alone (record.Encoder, CRC-32C included), median of the rounds.
func benchAppend(b *testing.B, codec string) {
	dir, l := appendLog(b, codec)
	rs := benchRecords(1000)
	var enc record.Encoder
	batch, _ := enc.AppendBatch(nil, 0, rs, record.BatchOptions{})
	if _, err := l.Append(rs); err != nil { // the segment's bytes of one append
		b.Fatal(err)
	}
	chunk, err := os.ReadFile(segmentPath(l.dir, 0, kafkaname.LogSuffix))
	if err != nil {
		b.Fatal(err)
	}
	c, err := compression.Parse(codec)
	if err != nil {
		b.Fatal(err)
	}
	opt := record.BatchOptions{Codec: c}
	buf := make([]byte, 0, len(batch))
	encode := func() { buf, _ = enc.AppendBatch(buf[:0], 0, rs, opt) }
	ours := alternateAppends(b, l, dir, len(batch), chunk, func() error { _, err := l.Append(rs); return err }, encode)
	b.ReportMetric(float64(b.N)*1000/ours.Seconds()/1e6, "Mrec/s")
	b.ReportMetric(float64(len(chunk))*float64(b.N)/ours.Seconds()/1e6, "diskMB/s")
}

// alternateAppends runs b.N calls of appendOnce in rounds of appendRound,
// each round followed by as many write(2) calls of chunk to plain files in
// dir that roll where l's segments do. It reports ns/op and MB/s of ours
// (bytes per append) and x-plain-write, the median of the rounds' ratios
// (plain time over ours), and returns our total time. Unless encodeOnce
// is nil, each round also runs it as many times and x-write-encode is
// reported: the median of plain time over plain plus encoding time.
func alternateAppends(b *testing.B, l *Log, dir string, bytes int, chunk []byte, appendOnce func() error, encodeOnce func()) time.Duration {
	plain := newPlainWriter(b, dir, l.Config().SegmentBytes)
	defer plain.Close()
	var ratios, capped []float64
	var ours time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += appendRound {
		n := min(appendRound, b.N-done)
		start := time.Now()
		for i := 0; i < n; i++ {
			if err := appendOnce(); err != nil {
				b.Fatal(err)
			}
		}
		t := time.Since(start)
		ours += t
		p := plain.write(chunk, n)
		ratios = append(ratios, p.Seconds()/t.Seconds())
		if encodeOnce != nil {
			capped = append(capped, p.Seconds()/(p+timeRuns(encodeOnce, n)).Seconds())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(bytes)*float64(b.N)/ours.Seconds()/1e6, "MB/s")
	b.ReportMetric(median(ratios), "x-plain-write")
	if encodeOnce != nil {
		b.ReportMetric(median(capped), "x-write-encode")
	}
	return ours
}

// timeRuns runs fn n times and returns the time it took.
func timeRuns(fn func(), n int) time.Duration {
	start := time.Now()
	for i := 0; i < n; i++ {
		fn()
	}
	return time.Since(start)
}

// appendRound is the number of appends (of 1,000 records) per round.
const appendRound = 64

// plainWriter is the baseline of the append benchmark: write(2) to plain
// files in dir, a new one each time the current one reaches limit bytes.
type plainWriter struct {
	b     *testing.B
	dir   string
	limit int64
	f     *os.File
	size  int64
	files int
}

func newPlainWriter(b *testing.B, dir string, limit int64) *plainWriter {
	p := &plainWriter{b: b, dir: dir, limit: limit}
	p.next()
	return p
}

func (p *plainWriter) next() {
	if p.f != nil {
		p.Close()
	}
	f, err := os.Create(filepath.Join(p.dir, fmt.Sprintf("plain-%d", p.files)))
	if err != nil {
		p.b.Fatal(err)
	}
	p.f, p.size, p.files = f, 0, p.files+1
}

// write writes chunk n times and returns the time it took.
func (p *plainWriter) write(chunk []byte, n int) time.Duration {
	start := time.Now()
	for i := 0; i < n; i++ {
		if p.size+int64(len(chunk)) > p.limit {
			p.next()
		}
		if _, err := p.f.Write(chunk); err != nil {
			p.b.Fatal(err)
		}
		p.size += int64(len(chunk))
	}
	return time.Since(start)
}

// Close closes and removes the current file (earlier ones are removed as
// the next one starts).
func (p *plainWriter) Close() error {
	p.f.Close()
	return os.Remove(p.f.Name())
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

// benchLog builds a log of n 120-byte records in batches of 1000 in dir.
func benchLog(b *testing.B, dir string, n int, cfg map[string]string) (*Store, *Log) {
	return benchLogBatches(b, dir, n, 1000, cfg)
}

// benchLogBatches builds a log of n 120-byte records in batches of per
// records (uncut: a Kafka producer's batches may be larger than ours).
func benchLogBatches(b *testing.B, dir string, n, per int, cfg map[string]string) (*Store, *Log) {
	st, err := Open(dir, Options{NoBackground: true, Defaults: cfg})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Partitions("t"); err != nil {
		st.CreateTopic("t")
	}
	l, _ := st.Log("t", 0)
	rs := benchRecords(per)
	for done := int(l.EndOffset()); done < n; done += per {
		for i := range rs {
			rs[i].Timestamp = 1_764_410_400_000 + int64(done+i)
		}
		if _, err := l.Append(rs); err != nil {
			b.Fatal(err)
		}
	}
	return st, l
}

// BenchmarkSequentialRead reads every record of a 500,000-record log
// through Log.Read, alternating each pass with two baselines on the same
// bytes (the log's segment files, whole, in 1 MiB reads into one buffer,
// from the page cache): plain pread, and pread plus the CRC-32C of what
// it read. The log's read (through a mapping of the segment, see
// scanMapped) does more with those bytes: it checks every batch's CRC
// (which docs/spec.md requires of a read) and parses and delivers every record. x-plain-pread and x-pread-crc are the medians of the
// rounds' ratios (the baseline's time over ours). x-scan is the ceiling of
// x-plain-pread for a read that checks every batch as ours does: plain
// pread's time over that of a third pass, our own scan of the same
// batches (Log.Read's, through a mapping of the segment: size and CRC
// checks) with no record parsed or delivered.
//
// Our passes find the regions of the segment mapped by the passes before
// (regions); x-unmapped is x-plain-pread of a fourth pass, timed after
// the regions were dropped: a first read of the segment in the process.
func BenchmarkSequentialRead(b *testing.B) {
	st, l := benchLog(b, benchDir(b), 500_000, nil)
	defer st.Close()
	segs, release := l.Segments()
	defer release()
	size := l.Stats().SizeBytes
	b.SetBytes(size)
	b.ReportAllocs()
	buf := make([]byte, 1<<20)
	crc := func(p []byte) { crc32c.Checksum(p) }
	var plain, checked, scanned, unmapped []float64
	var ours time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := readSegs(b, l, segs)
		ours += t
		p := plainPread(b, l, segs, buf, nil)
		plain = append(plain, p.Seconds()/t.Seconds())
		checked = append(checked, plainPread(b, l, segs, buf, crc).Seconds()/t.Seconds())
		scanned = append(scanned, p.Seconds()/scanOnly(b, l, segs).Seconds())
		b.StopTimer()
		dropRegions(l)
		b.StartTimer()
		unmapped = append(unmapped, p.Seconds()/readSegs(b, l, segs).Seconds())
	}
	b.StopTimer()
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(size)*float64(b.N)/ours.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(l.EndOffset())*float64(b.N)/ours.Seconds()/1e6, "Mrec/s")
	b.ReportMetric(median(plain), "x-plain-pread")
	b.ReportMetric(median(checked), "x-pread-crc")
	b.ReportMetric(median(scanned), "x-scan")
	b.ReportMetric(median(unmapped), "x-unmapped")
}

// readSegs reads every record of segs through l.Read and returns the time
// it took.
func readSegs(b *testing.B, l *Log, segs []partlog.Segment) time.Duration {
	start := time.Now()
	n := 0
	for _, s := range segs {
		if err := l.Read(s, s.Base, func(r *record.Record) bool { n += len(r.Value); return true }); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// dropRegions unmaps the mapped regions of l's segments that regions
// holds, and waits for the unmapping (which a timed pass would otherwise
// contend with for the process's address space).
func dropRegions(l *Log) {
	l.mu.Lock()
	segs := append([]*segment(nil), l.segs...)
	l.mu.Unlock()
	for _, s := range segs {
		regions.dropSegment(s)
	}
	regions.settle()
}

// scanOnly scans every batch of segs as Log.Read does, reading and
// checking them and passing none on, and returns the time it took.
func scanOnly(b *testing.B, l *Log, segs []partlog.Segment) time.Duration {
	start := time.Now()
	for _, seg := range segs {
		s, err := l.segmentByID(seg)
		if err != nil {
			b.Fatal(err)
		}
		err = scanWithFirst(s, 0, seg.Size, seg.Size, func(*record.Batch) (bool, error) { return false, nil })
		l.releaseAll([]*segment{s})
		if err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// plainPread reads the segment files of segs whole with pread into buf,
// passing each read to check unless it is nil, and returns the time it
// took.
func plainPread(b *testing.B, l *Log, segs []partlog.Segment, buf []byte, check func([]byte)) time.Duration {
	start := time.Now()
	for _, s := range segs {
		f, err := os.Open(segmentPath(l.dir, s.Base, kafkaname.LogSuffix))
		if err != nil {
			b.Fatal(err)
		}
		for pos := int64(0); pos < s.Size; pos += int64(len(buf)) {
			n, _ := f.ReadAt(buf, pos)
			if check != nil {
				check(buf[:n])
			}
		}
		f.Close()
	}
	return time.Since(start)
}

// BenchmarkLookup measures, on a log of 10 M records in batches of 1000
// and of 1 M records in batches of 10 (one batch per write() of a few
// lines), reporting p50/p99:
//   - offset: Locate, Kafka's offset lookup (index + header-only scan to
//     the batch holding the offset; no payload read);
//   - first-record: Read of the first record at a random offset (reads
//     and CRC-checks the whole batch holding it);
//   - time: OffsetForTime of a random record's timestamp.
//
// Each lookup alternates with its bare baseline (see bareLookup): a
// binary search of the segment's own .index (for time: its .timeindex,
// then its .index) plus one pread from the entry's position to the end of
// the batch holding the answer, the least a reader of Kafka's format
// must do. x-bare is our p50 over the baseline's (≤ 1.2 is the target
// for offset and time).
func BenchmarkLookup(b *testing.B) {
	b.Run("batch1000", func(b *testing.B) { benchLookup(b, 10_000_000, 1000) })
	b.Run("batch10", func(b *testing.B) { benchLookup(b, 1_000_000, 10) })
}

func benchLookup(b *testing.B, n, per int) {
	st, l := benchLogBatches(b, benchDir(b), n, per, nil)
	defer st.Close()
	rng := rand.New(rand.NewSource(2))
	segs, release := l.Segments()
	defer release()
	bases := make([]int64, len(segs))
	for i, s := range segs {
		bases[i] = s.Base
	}
	bare := newBareLookup(b, l)
	end := l.EndOffset()
	const ts0 = 1_764_410_400_000
	b.Run("offset", func(b *testing.B) {
		runLookups(b, func() (func() error, func()) {
			off := rng.Int63n(end)
			return func() error {
				seg, pos, err := l.Locate(off)
				if err != nil || off < seg.Base || off >= seg.Next || pos < 0 || pos >= seg.Size {
					return fmt.Errorf("Locate(%d) = %+v %d %v", off, seg, pos, err)
				}
				return nil
			}, bare.offset(off)
		})
	})
	b.Run("first-record", func(b *testing.B) {
		runLookups(b, func() (func() error, func()) {
			off := rng.Int63n(end)
			return func() error {
				j := sort.Search(len(bases), func(k int) bool { return bases[k] > off }) - 1
				found := false
				l.Read(segs[j], off, func(r *record.Record) bool { found = r.Offset == off; return false })
				if !found {
					return fmt.Errorf("offset %d not found", off)
				}
				return nil
			}, bare.offset(off)
		})
	})
	b.Run("time", func(b *testing.B) {
		runLookups(b, func() (func() error, func()) {
			ts := ts0 + rng.Int63n(end)
			return func() error {
				if off, err := l.OffsetForTime(ts); err != nil || off != ts-ts0 {
					return fmt.Errorf("OffsetForTime(%d) = %d %v", ts, off, err)
				}
				return nil
			}, bare.time(ts)
		})
	})
	b.ReportMetric(float64(end), "records")
}

// runLookups times b.N lookups, each alternating with its baseline: next
// returns both for a fresh random key; the baseline runs on a key of its
// own, so neither finds the other's bytes in the CPU caches. It reports our
// p50/p99, the baseline's p50 and x-bare (our p50 over the baseline's).
func runLookups(b *testing.B, next func() (ours func() error, base func())) {
	b.ReportAllocs()
	lat := make([]time.Duration, 0, b.N)
	baseLat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		ours, _ := next()
		_, base := next()
		start := time.Now()
		err := ours()
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		base()
		baseLat = append(baseLat, time.Since(start))
	}
	p50, p99 := percentiles(lat)
	base50, _ := percentiles(baseLat)
	b.ReportMetric(float64(p50.Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(p99.Nanoseconds())/1000, "p99-µs")
	b.ReportMetric(float64(base50.Nanoseconds())/1000, "bare-p50-µs")
	b.ReportMetric(p50.Seconds()/base50.Seconds(), "x-bare")
}

func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// bareLookup is the least a reader of Kafka's on-disk format does for a
// lookup: the partition's own sparse index files, held in memory as
// Kafka's mmap holds them, searched with a binary search each (an offset
// lookup: the segment, then its .index; a time lookup: the segment by its
// largest timestamp, its .timeindex, then its .index for the offset the
// time entry gives), and ONE pread of the .log bytes from the found
// entry's position to the end of the batch that holds the answer. It
// parses no header and checks no CRC; the end of the target batch comes
// from a table built up front (batchEnds), outside the timed search: a
// real reader would need at least the headers of the batches it skips to
// know it.
type bareLookup struct {
	segs []bareSegment
	buf  []byte
}

type bareSegment struct {
	log       io.ReaderAt
	base      int64
	maxTs     int64
	oidx      []byte // the .index file's entries
	tidx      []byte // the .timeindex file's entries
	lastOff   []int64
	maxTsOf   []int64
	batchEnds []int64 // per batch: its end position in the .log
}

// newBareLookup reads l's index files and scans its batches.
func newBareLookup(b *testing.B, l *Log) *bareLookup {
	l.mu.Lock()
	segs := append([]*segment(nil), l.segs...)
	l.mu.Unlock()
	x := &bareLookup{}
	for _, s := range segs {
		bs := bareSegment{log: s.log, base: s.base, maxTs: s.maxTs,
			oidx: readIndexFile(b, l, s.base, kafkaname.IndexSuffix, s.oidx.SizeBytes()),
			tidx: readIndexFile(b, l, s.base, kafkaname.TimeIndexSuffix, s.tidx.SizeBytes())}
		sc := record.NewScanner(s.log, 0, s.size, s.path)
		for sc.Next() {
			h := &sc.Batch().Header
			bs.lastOff, bs.maxTsOf = append(bs.lastOff, h.LastOffset()), append(bs.maxTsOf, h.MaxTimestamp)
			bs.batchEnds = append(bs.batchEnds, sc.Batch().Pos+h.Size())
		}
		if sc.Err() != nil {
			b.Fatal(sc.Err())
		}
		x.segs = append(x.segs, bs)
	}
	return x
}

// readIndexFile returns the first n bytes (the entries) of the index file
// of the segment with base base.
func readIndexFile(b *testing.B, l *Log, base int64, suffix string, n int64) []byte {
	data, err := os.ReadFile(segmentPath(l.dir, base, suffix))
	if err != nil || int64(len(data)) < n {
		b.Fatalf("index file %d%s: %d bytes, %v", base, suffix, len(data), err)
	}
	return data[:n]
}

// offset returns the bare lookup of off, to be timed: the segment, the
// batch end is found now.
func (x *bareLookup) offset(off int64) func() {
	i := sort.Search(len(x.segs), func(k int) bool { return x.segs[k].base > off }) - 1
	s := &x.segs[i]
	end := s.batchEnds[sort.Search(len(s.lastOff), func(k int) bool { return s.lastOff[k] >= off })]
	return func() {
		j := sort.Search(len(x.segs), func(k int) bool { return x.segs[k].base > off }) - 1
		x.read(&x.segs[j], x.segs[j].position(off), end)
	}
}

// time returns the bare lookup of ts, to be timed.
func (x *bareLookup) time(ts int64) func() {
	i := sort.Search(len(x.segs), func(k int) bool { return x.segs[k].maxTs >= ts })
	s := &x.segs[i]
	end := s.batchEnds[sort.Search(len(s.maxTsOf), func(k int) bool { return s.maxTsOf[k] >= ts })]
	return func() {
		j := sort.Search(len(x.segs), func(k int) bool { return x.segs[k].maxTs >= ts })
		s := &x.segs[j]
		x.read(s, s.position(s.timeOffset(ts)), end)
	}
}

// position searches the .index for the largest entry with offset <= off:
// its position, or 0.
func (s *bareSegment) position(off int64) int64 {
	n := len(s.oidx) / index.OffsetEntrySize
	k := sort.Search(n, func(k int) bool {
		rel, _ := index.DecodeOffsetEntry(s.oidx[k*index.OffsetEntrySize:])
		return s.base+int64(rel) > off
	})
	if k == 0 {
		return 0
	}
	_, pos := index.DecodeOffsetEntry(s.oidx[(k-1)*index.OffsetEntrySize:])
	return int64(pos)
}

// timeOffset searches the .timeindex for the largest entry with timestamp
// <= ts: its offset, or the segment's base.
func (s *bareSegment) timeOffset(ts int64) int64 {
	n := len(s.tidx) / index.TimeEntrySize
	k := sort.Search(n, func(k int) bool {
		t, _ := index.DecodeTimeEntry(s.tidx[k*index.TimeEntrySize:])
		return t > ts
	})
	if k == 0 {
		return s.base
	}
	_, rel := index.DecodeTimeEntry(s.tidx[(k-1)*index.TimeEntrySize:])
	return s.base + int64(rel)
}

// read is the one pread of [pos, end) (into a buffer as large as any
// before).
func (x *bareLookup) read(s *bareSegment, pos, end int64) {
	if int64(len(x.buf)) < end-pos {
		x.buf = make([]byte, end-pos)
	}
	s.log.ReadAt(x.buf[:end-pos], pos)
}
