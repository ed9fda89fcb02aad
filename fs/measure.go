package fs

import (
	"fmt"
	"sync"

	"github.com/partfs/partfs/record"
)

// measureAsideMin is the number of records from which an append is
// measured on a goroutine of its own: below it, starting one costs more
// than it hides.
const measureAsideMin = 512

// measurement holds what the position bookkeeping needs of an append's
// records before the log has given them offsets: record.JSONFieldsLen of
// each, and the value bytes for the metrics. Measuring reads every byte of
// every value; a large append is measured while the log writes it, on the
// core that is otherwise idle while the writer waits for its write.
type measurement struct {
	wg     sync.WaitGroup
	fields []int64
	values int
	err    error // a panic while measuring
}

var measurements = sync.Pool{New: func() any { return new(measurement) }}

// measure starts measuring recs. The caller must not change recs before
// wait returns, and must call release once done with the figures.
func measure(recs []record.Record) *measurement {
	m := measurements.Get().(*measurement)
	if cap(m.fields) < len(recs) {
		m.fields = make([]int64, len(recs))
	}
	m.fields = m.fields[:len(recs)]
	if len(recs) < measureAsideMin {
		m.run(recs)
		return m
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.run(recs)
	}()
	return m
}

// run measures recs. A panic is kept as an error: it must not take the
// daemon down from a goroutine no handler guards.
func (m *measurement) run(recs []record.Record) {
	m.values, m.err = 0, nil
	defer func() {
		if p := recover(); p != nil {
			m.err = fmt.Errorf("measuring %d records: panic: %v", len(recs), p)
		}
	}()
	for i := range recs {
		m.fields[i] = record.JSONFieldsLen(&recs[i])
		m.values += len(recs[i].Value)
	}
}

// wait returns the JSONFieldsLen of each record (nil if measuring failed,
// with the error) and the records' value bytes.
func (m *measurement) wait() (fields []int64, values int, err error) {
	m.wg.Wait()
	if m.err != nil {
		return nil, m.values, m.err
	}
	return m.fields, m.values, nil
}

// release waits for the measuring to end and recycles m.
func (m *measurement) release() {
	m.wg.Wait()
	measurements.Put(m)
}
