package fs

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Write appends the complete lines of data (SPEC §4), ignoring off.
func (h *viewHandle) Write(ctx context.Context, data []byte, off int64) (_ uint32, errno syscall.Errno) {
	lg := h.n.lg // guard and fail name the op; no entry built per write
	defer h.n.p.fsys.observe("write", time.Now(), &errno)
	defer guard(lg, "write", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed != nil {
		err := h.failed
		if bytes.IndexByte(data, '\n') >= 0 {
			h.failed = nil
		}
		lg.WithError(err).WithField("op", "write").Debug("rest of a refused line refused too")
		return 0, toErrno(err)
	}
	if bytes.IndexByte(data, '\n') < 0 {
		// No line ends here: hold the bytes, within bounds.
		h.partial = append(h.partial, data...)
		if err := h.checkPartial(); err != nil {
			h.partial, h.failed = nil, err
			return 0, fail(lg, "write", err)
		}
		return uint32(len(data)), 0
	}
	held := len(h.partial) > 0
	recs, rest, err := h.parseWrite(data)
	if err == nil {
		h.recs = recs[:0] // reused by the next write; Append copied them
		err = h.n.p.append(recs)
	}
	if err != nil {
		// The held partial line belonged to the failed lines: drop it
		// so close does not fail again on it.
		h.partial = nil
		if held {
			h.failed = err
		}
		return 0, fail(lg, "write", err)
	}
	h.partial = append(h.partial[:0], rest...)
	return uint32(len(data)), 0
}

// checkPartial refuses a held partial line that can no longer become a
// record within max.message.bytes (a JSON line may shrink by escapes).
// REQUIRES: mu held.
func (h *viewHandle) checkPartial() error {
	if len(h.partial) <= 1<<20 {
		return nil
	}
	limit := h.n.p.maxMessageBytes()
	if h.n.k == jsonKind {
		limit *= 8
	}
	if int64(len(h.partial)) > limit {
		return fmt.Errorf("unfinished line of %d bytes exceeds what max.message.bytes allows (%d): %w",
			len(h.partial), limit, partlog.ErrTooLarge)
	}
	return nil
}

// maxMessageBytes is the topic's max.message.bytes (Kafka's default if
// unreadable).
func (p *part) maxMessageBytes() int64 {
	kvs, err := p.fsys.opt.Store.TopicConfig(p.log.Topic())
	if err == nil {
		for _, kv := range kvs {
			if kv.Key == "max.message.bytes" {
				if n, err := strconv.ParseInt(kv.Value, 10, 64); err == nil && n > 0 {
					return n
				}
			}
		}
	}
	return 1048588
}

// parseWrite parses the held partial line followed by data without
// copying data: the first line is joined, the rest parsed in place.
// REQUIRES: mu held.
func (h *viewHandle) parseWrite(data []byte) ([]record.Record, []byte, error) {
	if len(h.partial) == 0 {
		return h.parseAfter(h.recs[:0], data)
	}
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return nil, append(bytes.Clone(h.partial), data...), nil
	}
	head := append(append(make([]byte, 0, len(h.partial)+i+1), h.partial...), data[:i+1]...)
	recs, _, err := h.parseAfter(h.recs[:0], head)
	if err != nil {
		return nil, nil, err
	}
	return h.parseAfter(recs, data[i+1:])
}

func (h *viewHandle) parse(buf []byte) ([]record.Record, []byte, error) {
	return h.parseAfter(nil, buf)
}

// parseAfter parses buf's complete lines into records appended to recs.
func (h *viewHandle) parseAfter(recs []record.Record, buf []byte) ([]record.Record, []byte, error) {
	if h.n.k == jsonKind {
		more, rest, err := jsonRecords(buf)
		return append(recs, more...), rest, err
	}
	recs, rest := plainRecords(recs, buf)
	return recs, rest, nil
}

// flushPartial appends a held partial line. REQUIRES: mu held.
func (h *viewHandle) flushPartial() error {
	if len(h.partial) == 0 {
		return nil
	}
	line := append(h.partial, '\n')
	h.partial = nil
	recs, _, err := h.parse(line)
	if err != nil {
		return err
	}
	return h.n.p.append(recs)
}

func (h *viewHandle) Flush(ctx context.Context) (errno syscall.Errno) {
	defer guard(h.n.lg, "flush", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failed = nil
	if err := h.flushPartial(); err != nil {
		return fail(h.n.lg, "flush", err)
	}
	return 0
}

func (h *viewHandle) Fsync(ctx context.Context, flags uint32) (errno syscall.Errno) {
	defer guard(h.n.lg, "fsync", &errno)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.flushPartial(); err != nil {
		return fail(h.n.lg, "fsync", err)
	}
	if err := h.n.p.log.Sync(); err != nil {
		return fail(h.n.lg, "fsync", err)
	}
	return 0
}

// append appends recs as one atomic write and feeds the position
// bookkeeping.
func (p *part) append(recs []record.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if p.fsys.ro {
		return fmt.Errorf("append to %s-%d: %w", p.log.Topic(), p.log.Partition(), partlog.ErrReadOnly)
	}
	m := measure(recs)
	defer m.release()
	first, err := p.log.Append(recs)
	if err != nil {
		return err
	}
	if err := m.wait(); err != nil {
		p.lg.WithError(err).Error("position bookkeeping left to a later scan")
	} else {
		p.ly.noteAppend(first, m, p.fsys.opt.Now().UnixMilli())
	}
	p.fsys.opt.Metrics.Appended(p.log.Topic(), p.log.Partition(), m.values, len(recs))
	if p.lg.Logger.IsLevelEnabled(logrus.TraceLevel) {
		p.lg.WithFields(logrus.Fields{"offset": first, "records": len(recs)}).Trace("appended")
	}
	return nil
}
