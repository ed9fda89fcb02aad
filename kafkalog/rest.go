package kafkalog

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/record"
)

// A fetch answer holds whole batches, and a producer's batch often spans
// two windows (1 MB of 120-byte records is 8,000 offsets): the Read of one
// window then fetches the batches the next window's Read fetches again.
// restCache keeps the part of an answer past the window it was fetched
// for, and the next window's Read, which a sequential reader makes at
// once, starts with it: at most restEntries answers, each for restMaxAge.
const (
	restEntries = 4
	restMaxAge  = time.Second
)

type restCache struct {
	mu      sync.Mutex
	entries []restEntry // REQUIRES: mu held; oldest first
}

type restEntry struct {
	l      *Log
	at     int64 // the offset a fetch for these batches is sent for
	p      *kmsg.FetchResponseTopicPartition
	broker string
	t      time.Time
}

// put keeps the batches of p from byte pos on as the answer to a fetch at
// offset at (where the window they were fetched for ends).
func (c *restCache) put(l *Log, at int64, p *kmsg.FetchResponseTopicPartition, pos int, broker string) {
	rest := *p
	rest.RecordBatches = p.RecordBatches[pos:]
	if !wholeBatch(rest.RecordBatches) {
		return // a fetch answers with one whole batch at least; so must the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == restEntries {
		c.entries = append(c.entries[:0], c.entries[1:]...)
	}
	c.entries = append(c.entries, restEntry{l: l, at: at, p: &rest, broker: broker, t: time.Now()})
}

// wholeBatch reports whether b begins with a whole batch, by its length
// field (the batch itself is checked when it is read).
func wholeBatch(b []byte) bool {
	if len(b) < record.LogOverhead {
		return false
	}
	n := int64(int32(binary.BigEndian.Uint32(b[8:])))
	return n > 0 && record.LogOverhead+n <= int64(len(b))
}

// take returns, once, the batches kept for a fetch of l at offset at.
func (c *restCache) take(l *Log, at int64) (*kmsg.FetchResponseTopicPartition, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.l == l && e.at == at {
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			if time.Since(e.t) > restMaxAge {
				return nil, "", false
			}
			return e.p, e.broker, true
		}
	}
	return nil, "", false
}
