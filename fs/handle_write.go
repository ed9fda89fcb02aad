package fs

import (
	"bytes"
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/fs/position"
	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Write appends the complete lines of data (docs/spec.md §4) at the log's end,
// wherever the kernel's off says its end is, and holds the rest.
func (h *viewHandle) Write(ctx context.Context, data []byte, off int64) (_ uint32, errno syscall.Errno) {
	lg := h.n.lg // guard and fail name the op; no entry built per write
	defer h.n.p.fsys.observe("write", time.Now(), &errno)
	defer guard(lg, "write", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed != nil {
		err := h.failed
		if bytes.IndexByte(data, '\n') >= 0 {
			h.failed, h.unreported = nil, false
		}
		lg.WithError(err).WithField("op", "write").Debug("rest of a refused line refused too")
		return 0, toErrno(err)
	}
	if bytes.IndexByte(data, '\n') < 0 {
		// No line ends here: hold the bytes, within bounds.
		held := len(h.partial) > 0
		h.partial = append(h.partial, data...)
		if err := h.checkPartial(); err != nil {
			h.partial, h.failed, h.unreported = nil, err, held
			return 0, fail(lg, "write", err)
		}
		return uint32(len(data)), 0
	}
	held := len(h.partial) > 0
	head, body, rest := h.splitWrite(data)
	log, _ := h.n.p.in(ctx)
	err := h.appendWrite(log, head, body)
	if err != nil {
		// The held partial line belonged to the failed lines: drop it
		// so close does not fail again on it.
		h.partial = nil
		if held {
			h.failed, h.unreported = err, true
		}
		return 0, fail(lg, "write", err)
	}
	h.partial = append(h.partial[:0], rest...)
	return uint32(len(data)), 0
}

// appendWrite appends the complete lines of head and body as one atomic
// write: encoded with the topic's schemas where it has subjects (SPEC
// §11), else as SPEC §4 says. REQUIRES: mu held.
func (h *viewHandle) appendWrite(log partlog.Log, head, body []byte) error {
	p := h.n.p
	value, key, err := p.encodes()
	if err != nil {
		return err
	}
	var recs []record.Record
	switch {
	case h.n.k == position.Plain && value:
		if recs, err = p.encodePlain(h.recs[:0], head); err == nil {
			recs, err = p.encodePlain(recs, body)
		}
	case h.n.k == position.JSON && (value || key):
		var lines []byte
		if lines, err = p.encodeJSONLines(append(head, body...), value, key); err == nil {
			recs, err = h.parseAfter(h.recs[:0], lines)
		}
	case h.n.k == position.Plain:
		if la, ok := log.(partlog.LineAppender); ok {
			return p.appendLines(la, head, body)
		}
		fallthrough
	default:
		if recs, err = h.parseAfter(h.recs[:0], head); err == nil {
			recs, err = h.parseAfter(recs, body)
		}
	}
	if err != nil {
		return err
	}
	h.recs = recs[:0] // reused by the next write; Append copied them
	return p.appendTo(log, recs)
}

// checkPartial refuses a held partial line that can no longer become a
// record within max.message.bytes, so a write() of a line too long for
// one request fails whole with EFBIG at its first request instead of
// returning a short count. On an uncompressed topic a plain line is
// refused once it and a batch header exceed the limit (exact: the value
// alone is that long); a JSON line may shrink by escapes and a compressed
// batch may be smaller than its line, so those get a looser bound.
// REQUIRES: mu held.
func (h *viewHandle) checkPartial() error {
	if h.n.k != position.Plain && len(h.partial) <= 1<<20 {
		return nil
	}
	if h.conf == nil {
		conf := h.n.p.topicConf()
		h.conf = &conf
	}
	exact := h.n.k == position.Plain && !h.conf.Compressed()
	if !exact && len(h.partial) <= 1<<20 {
		return nil
	}
	limit := int64(h.conf.MaxMessageBytes)
	switch {
	case exact:
		limit -= record.BatchHeaderSize
	case h.n.k == position.JSON:
		limit *= 8
	}
	if int64(len(h.partial)) > limit {
		return fmt.Errorf("unfinished line of %d bytes exceeds what max.message.bytes allows (%d): %w",
			len(h.partial), limit, partlog.ErrTooLarge)
	}
	return nil
}

// topicConf is the topic's configuration as the store reports it, with
// Kafka's defaults for what it cannot report.
func (p *part) topicConf() config.Topic {
	kvs, err := p.fsys.opt.Store.TopicConfig(p.log.Topic())
	if err != nil {
		kvs = nil
	}
	return config.Reported(partlog.KVPairs(kvs))
}

// splitWrite cuts the held partial line and data, which holds a line end,
// into head (the held line completed by data's first line; nil when none
// is held), body (data's complete lines after it) and rest (data's
// unfinished last line). head is a new slice; body and rest alias data.
// REQUIRES: mu held.
func (h *viewHandle) splitWrite(data []byte) (head, body, rest []byte) {
	end := bytes.LastIndexByte(data, '\n') + 1
	body, rest = data[:end], data[end:]
	if len(h.partial) > 0 {
		i := bytes.IndexByte(body, '\n') + 1
		head = append(append(make([]byte, 0, len(h.partial)+i), h.partial...), body[:i]...)
		body = body[i:]
	}
	return head, body, rest
}

// parseAfter parses buf's complete lines into records appended to recs.
func (h *viewHandle) parseAfter(recs []record.Record, buf []byte) ([]record.Record, error) {
	if h.n.k == position.JSON {
		more, _, err := jsonl.Parse(buf)
		return append(recs, more...), err
	}
	return record.AppendLineRecords(recs, buf), nil
}

// flushPartial appends a held partial line. REQUIRES: mu held.
func (h *viewHandle) flushPartial(log partlog.Log) error {
	if len(h.partial) == 0 {
		return nil
	}
	line := append(h.partial, '\n')
	h.partial = nil
	return h.appendWrite(log, nil, line)
}

func (h *viewHandle) Flush(ctx context.Context) (errno syscall.Errno) {
	defer guard(h.n.lg, "flush", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	err, unreported := h.failed, h.unreported
	h.failed, h.unreported = nil, false
	if err != nil && unreported {
		// A line refused after earlier requests of it succeeded may have
		// left the writer a short count only: close tells it.
		return fail(h.n.lg, "flush", fmt.Errorf("a line refused by an earlier write was never stored: %w", err))
	}
	log, _ := h.n.p.in(ctx)
	if err := h.flushPartial(log); err != nil {
		return fail(h.n.lg, "flush", err)
	}
	return 0
}

func (h *viewHandle) Fsync(ctx context.Context, flags uint32) (errno syscall.Errno) {
	defer guard(h.n.lg, "fsync", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	log, _ := h.n.p.in(ctx)
	if err := h.flushPartial(log); err != nil {
		return fail(h.n.lg, "fsync", err)
	}
	if err := log.Sync(); err != nil {
		return fail(h.n.lg, "fsync", err)
	}
	return 0
}

// append appends recs as one atomic write and feeds the position
// bookkeeping.
func (p *part) append(recs []record.Record) error { return p.appendTo(p.log, recs) }

// appendTo is append through log: p's Log, or the same bound to the
// request (part.in).
func (p *part) appendTo(log partlog.Log, recs []record.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := p.writable(); err != nil {
		return err
	}
	if p.schemas.decodesAny(recs) {
		return p.appendDecoding(log, recs)
	}
	m := position.Measure(recs)
	defer m.Release()
	first, err := log.Append(recs)
	if err != nil {
		return err
	}
	p.appended(first, len(recs), m)
	return nil
}

// appendLines appends the lines of head and then of body as one atomic
// write, the log encoding them where they lie, and feeds the position
// bookkeeping.
func (p *part) appendLines(la partlog.LineAppender, head, body []byte) error {
	if len(head) == 0 && len(body) == 0 {
		return nil
	}
	if err := p.writable(); err != nil {
		return err
	}
	m := position.MeasureLines(head, body)
	defer m.Release()
	first, n, err := la.AppendLines(head, body)
	if err != nil {
		return err
	}
	p.appended(first, n, m)
	return nil
}

func (p *part) writable() error {
	if p.fsys.ro {
		return fmt.Errorf("append to %s-%d: %w", p.log.Topic(), p.log.Partition(), partlog.ErrReadOnly)
	}
	return nil
}

// appended feeds the bookkeeping and the metrics the n records appended at
// offset first, as m measures them.
func (p *part) appended(first int64, n int, m *position.Measurement) {
	err := m.Wait()
	if err == nil && m.Records() != n {
		err = fmt.Errorf("%d records measured, %d appended", m.Records(), n)
	}
	if err != nil {
		p.lg.WithError(err).Error("position bookkeeping left to a later scan")
	} else {
		p.ly.NoteAppend(first, m, p.fsys.opt.Now().UnixMilli())
	}
	p.fsys.opt.Metrics.Appended(p.log.Topic(), p.log.Partition(), m.ValueBytes(), n)
	if p.lg.Logger.IsLevelEnabled(logrus.TraceLevel) {
		p.lg.WithFields(logrus.Fields{"offset": first, "records": n}).Trace("appended")
	}
}
