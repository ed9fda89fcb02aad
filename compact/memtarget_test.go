package compact

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// memTarget is an in-memory Target: raw segments in byte slices.
type memTarget struct {
	mu         sync.Mutex // for background tests: guards segs and checkpoint
	t          testing.TB
	segs       []*memSeg // the last one is active
	end        int64
	checkpoint int64
	cfg        config.Topic
	nextID     uint64
	replaces   int
	replaceErr error       // returned by Replace when set
	lastClean  *memCleaned // the last cleaned segment started
	enc        record.Encoder
}

type memSeg struct {
	base  int64
	data  []byte
	id    uint64
	maxTs int64
	mtime time.Time
}

func newMemTarget(t testing.TB) *memTarget {
	cfg := config.Defaults()
	cfg.CleanupPolicy = "compact"
	m := &memTarget{t: t, cfg: cfg}
	m.segs = []*memSeg{m.newSeg(0)}
	return m
}

func (m *memTarget) newSeg(base int64) *memSeg {
	m.nextID++
	return &memSeg{base: base, id: m.nextID, maxTs: -1, mtime: time.UnixMilli(1)}
}

// add appends one batch of records (key/value pairs, "<nil>" = tombstone,
// "" key = null) with timestamp ts.
func (m *memTarget) add(ts int64, codec record.Codec, kvs ...string) {
	var recs []record.Record
	for i := 0; i+1 < len(kvs); i += 2 {
		r := record.Record{Timestamp: ts}
		if kvs[i] != "" {
			r.Key = []byte(kvs[i])
		}
		if kvs[i+1] != "<nil>" {
			r.Value = []byte(kvs[i+1])
		}
		recs = append(recs, r)
	}
	a := m.segs[len(m.segs)-1]
	var err error
	if a.data, err = m.enc.AppendBatch(a.data, m.end, recs, record.BatchOptions{Codec: codec}); err != nil {
		m.t.Fatal(err)
	}
	a.maxTs = max(a.maxTs, ts)
	m.end += int64(len(recs))
}

func (m *memTarget) roll() { m.segs = append(m.segs, m.newSeg(m.end)) }

func (m *memTarget) Topic() string      { return "t" }
func (m *memTarget) Partition() int     { return 0 }
func (m *memTarget) StartOffset() int64 { return m.segs[0].base }
func (m *memTarget) Config() config.Topic {
	return m.cfg
}
func (m *memTarget) CleanerCheckpoint() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checkpoint
}

func (m *memTarget) SetCleanerCheckpoint(o int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checkpoint = o
	return nil
}

func (m *memTarget) Segments() ([]partlog.Segment, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]partlog.Segment, len(m.segs))
	for i, s := range m.segs {
		next := m.end
		if i+1 < len(m.segs) {
			next = m.segs[i+1].base
		}
		out[i] = partlog.Segment{Base: s.base, Next: next, Size: int64(len(s.data)), MaxTimestamp: s.maxTs, ID: s.id}
	}
	return out, func() {}
}

func (m *memTarget) find(seg partlog.Segment) (*memSeg, int) {
	for i, s := range m.segs {
		if s.id == seg.ID {
			return s, i
		}
	}
	m.t.Fatalf("segment %+v not in the log", seg)
	return nil, 0
}

func (m *memTarget) SegmentReader(seg partlog.Segment) (io.ReaderAt, func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, _ := m.find(seg)
	return bytes.NewReader(s.data), func() {}, nil
}

func (m *memTarget) SegmentModTime(seg partlog.Segment) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, _ := m.find(seg)
	return s.mtime
}

func (m *memTarget) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	r, _, _ := m.SegmentReader(seg)
	sc := record.NewScanner(r, 0, seg.Size, "mem")
	var dec record.Decoder
	for sc.Next() {
		b := sc.Batch()
		if b.Header.IsControl() || b.Header.LastOffset() < from {
			continue
		}
		more := true
		err := dec.Records(b, func(r *record.Record) bool {
			if r.Offset >= seg.Next {
				more = false
			} else if r.Offset >= from {
				more = fn(r)
			}
			return more
		})
		if err != nil || !more {
			return err
		}
	}
	return sc.Err()
}

type memCleaned struct {
	base    int64
	data    []byte
	aborted bool
	txns    []AbortedTxn
}

func (c *memCleaned) AddAbortedTxn(t AbortedTxn) { c.txns = append(c.txns, t) }

// AbortedTxns: a memTarget holds no aborted transactions.
func (m *memTarget) AbortedTxns(from, to int64) []AbortedTxn { return nil }

func (c *memCleaned) AppendBatch(raw []byte) error { c.data = append(c.data, raw...); return nil }
func (c *memCleaned) Size() int64                  { return int64(len(c.data)) }
func (c *memCleaned) Abort() error                 { c.aborted = true; return nil }

func (m *memTarget) NewCleaned(base int64) (Cleaned, error) {
	m.lastClean = &memCleaned{base: base}
	return m.lastClean, nil
}

func (m *memTarget) Replace(cleaned []Cleaned, old []partlog.Segment) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.replaceErr != nil {
		return m.replaceErr
	}
	_, first := m.find(old[0])
	_, last := m.find(old[len(old)-1])
	var repl []*memSeg
	for _, c := range cleaned {
		mc := c.(*memCleaned)
		s := m.newSeg(mc.base)
		s.data = mc.data
		s.mtime = m.segs[last].mtime
		for _, o := range m.segs[first : last+1] {
			s.maxTs = max(s.maxTs, o.maxTs)
		}
		repl = append(repl, s)
	}
	m.segs = append(append(append([]*memSeg{}, m.segs[:first]...), repl...), m.segs[last+1:]...)
	m.replaces++
	return nil
}

// records decodes the whole log.
func (m *memTarget) records() []kv {
	var all []kv
	for _, s := range m.segs {
		_, recs := decodeAll(m.t, s.data)
		all = append(all, recs...)
	}
	return all
}

func (m *memTarget) String() string { return fmt.Sprint(m.records()) }
