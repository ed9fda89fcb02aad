package position

import (
	"fmt"
	"slices"
	"sync"

	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/record"
)

// measureAsideMin is the number of records from which an append is
// measured on a goroutine of its own. Below it, the append is over before
// a new goroutine gets a core, and measuring in line is cheaper.
const measureAsideMin = 2048

// MeasureAsideBytes stands for measureAsideMin where the lines are not yet
// counted: 2048 lines of 64 bytes.
const MeasureAsideBytes = measureAsideMin * 64

// recLen is what the position bookkeeping needs of records before the
// log has given them offsets: their plain renderings' length (line ends
// included) and their jsonl.FieldsLen.
type recLen struct{ plain, fields int64 }

// Measurement is what an append's records measure: every byte of every
// value is read, so a large append is measured while the log writes it,
// on the core that is otherwise idle while the writer waits for its
// write. The bookkeeping then reads these figures, not the records.
type Measurement struct {
	wg     sync.WaitGroup
	sums   []recLen // running totals: sums[i] adds up records 0..i
	minTs  int64    // the smallest positive timestamp, 0 if none
	maxTs  int64    // the largest timestamp
	values int      // value bytes, for the metrics
	err    error    // a panic while measuring
	ends   []int32  // plainLines's buffer of line ends
	quotes []int32  // and of the quotes before each
}

var measurements = sync.Pool{New: func() any { return new(Measurement) }}

// Measure starts measuring recs. The caller must not change recs before
// wait returns, and must call release once done with the figures.
func Measure(recs []record.Record) *Measurement {
	return start(len(recs), len(recs) >= measureAsideMin, func(m *Measurement) {
		for i := range recs {
			m.note(&recs[i])
		}
	})
}

// MeasureLines is measure of the records record.AppendLineRecords makes of
// head and then of body, measured from the lines before they are appended:
// by plainLines where it can, else record by record.
func MeasureLines(head, body []byte) *Measurement {
	return start(0, len(body) >= MeasureAsideBytes, func(m *Measurement) {
		if m.plainLines(head, body) {
			return
		}
		for line := range record.Lines(head, body) {
			m.note(&record.Record{Value: line})
		}
	})
}

// lineFields is jsonl.FieldsLen of an empty plain value; a value of
// printable ASCII adds its length and its count of '"' and '\\' (each
// escaped with a '\\') to it.
var lineFields = jsonl.FieldsLen(&record.Record{Value: []byte{}})

// maxPlainBytes bounds the bytes plainLines measures (ScanLines indexes
// them with int32s).
const maxPlainBytes = 1 << 30

// plainLines measures the Lines of chunks from what record.ScanLines
// finds when every other byte is printable ASCII: each line's record then
// renders as the line plus '\n', and its JSON fields are lineFields plus
// its length and its quotes, with no timestamp. Otherwise it measures
// nothing and reports false. The ends index the chunks as if joined.
// REQUIRES: m fresh from start.
func (m *Measurement) plainLines(chunks ...[]byte) bool {
	ends, quotes, total := m.ends[:0], m.quotes[:0], 0
	defer func() { m.ends, m.quotes = keptEnds(ends), keptEnds(quotes) }()
	var sum recLen
	var q int32 // quotes of the chunks before
	for _, c := range chunks {
		k, start, lineQ := len(ends), total, q
		var ascii bool
		if total += len(c); total >= maxPlainBytes {
			return m.unmeasured()
		}
		if ends, quotes, q, ascii = record.ScanLines(ends, quotes, c, int32(start), q); !ascii {
			return m.unmeasured()
		}
		m.sums = slices.Grow(m.sums, len(ends)-k)
		for ; k < len(ends); k++ {
			n := int64(int(ends[k]) - start)
			sum.plain += n + 1
			sum.fields += lineFields + n + int64(quotes[k]-lineQ)
			m.sums = append(m.sums, sum)
			m.values += int(n)
			start, lineQ = int(ends[k])+1, quotes[k]
		}
	}
	return true
}

// unmeasured drops what plainLines measured and reports false.
func (m *Measurement) unmeasured() bool {
	m.sums, m.values = m.sums[:0], 0
	return false
}

// keptEnds is ends emptied for the next measurement, or nil if a write of
// dense lines grew it past 64 Ki entries.
func keptEnds(ends []int32) []int32 {
	if cap(ends) > 64<<10 {
		return nil
	}
	return ends[:0]
}

// start runs fn to measure records (about n), on a goroutine of its own if
// aside, else in line. A panic is kept as an error: it must not take the
// daemon down from a goroutine no handler guards.
func start(n int, aside bool, fn func(*Measurement)) *Measurement {
	m := measurements.Get().(*Measurement)
	m.sums, m.minTs, m.maxTs, m.values, m.err = slices.Grow(m.sums[:0], n), 0, 0, 0, nil
	run := func() {
		defer func() {
			if p := recover(); p != nil {
				m.err = fmt.Errorf("measuring record %d: panic: %v", len(m.sums), p)
			}
		}()
		fn(m)
	}
	if !aside {
		run()
		return m
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		run()
	}()
	return m
}

// note measures the next record.
func (m *Measurement) note(r *record.Record) {
	sum := recLen{plainLen(r), jsonl.FieldsLen(r)}
	if i := len(m.sums); i > 0 {
		sum.plain += m.sums[i-1].plain
		sum.fields += m.sums[i-1].fields
	}
	m.sums = append(m.sums, sum)
	m.values += len(r.Value)
	if ts := r.Timestamp; ts > 0 {
		if m.minTs == 0 || ts < m.minTs {
			m.minTs = ts
		}
		m.maxTs = max(m.maxTs, ts)
	}
}

// sumBefore is the running total of the records before record i.
func (m *Measurement) sumBefore(i int) recLen {
	if i == 0 {
		return recLen{}
	}
	return m.sums[i-1]
}

// Wait waits for the measuring to end; an error means the figures are
// incomplete.
func (m *Measurement) Wait() error {
	m.wg.Wait()
	return m.err
}

// Release waits for the measuring to end and recycles m.
func (m *Measurement) Release() {
	m.wg.Wait()
	measurements.Put(m)
}

// Records is how many records m measured. REQUIRES: after Wait.
func (m *Measurement) Records() int { return len(m.sums) }

// ValueBytes is the value bytes of the records m measured, for the
// metrics. REQUIRES: after Wait.
func (m *Measurement) ValueBytes() int { return m.values }
