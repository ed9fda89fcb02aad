package kafkalog

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A fetch answer holds whole batches, and a producer's batch often spans
// two tiles (1 MB of 120-byte records is 8,000 offsets), or the offset
// where one reader's range ends and another's begins: the Read of the
// next tile or range then fetched the batches the previous Read had
// fetched and not passed. restCache keeps the part of an answer from the
// batch holding the first record a Read did not pass, and the next Read
// from there (a sequential reader makes it at once) starts with it: at
// most restEntries answers, each for restMaxAge, each taken once.
const (
	restEntries = 4
	restMaxAge  = time.Second
)

type restCache struct {
	mu      sync.Mutex
	entries []restEntry // REQUIRES: mu held; oldest first
}

// restEntry is what a fetch at any offset in [lo, hi] answers with.
type restEntry struct {
	l      *logState
	lo, hi int64
	p      *kmsg.FetchResponseTopicPartition
	broker string
	t      time.Time
}

// put keeps the batches of p from byte pos on (where a batch the Read
// scanned whole begins, so the rest starts with a whole batch, as a fetch
// answer does), with the aborted transactions txns, as the answer to a
// fetch at lo..hi (from where the Read had reached to the last offset of
// the first batch kept).
func (c *restCache) put(l *Log, lo, hi int64, p *kmsg.FetchResponseTopicPartition, pos int, txns []kmsg.FetchResponseTopicPartitionAbortedTransaction, broker string) {
	if lo > hi {
		return
	}
	rest := *p
	rest.RecordBatches = p.RecordBatches[pos:]
	rest.AbortedTransactions = append([]kmsg.FetchResponseTopicPartitionAbortedTransaction(nil), txns...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == restEntries {
		c.entries = append(c.entries[:0], c.entries[1:]...)
	}
	c.entries = append(c.entries, restEntry{l: l.logState, lo: lo, hi: hi, p: &rest, broker: broker, t: time.Now()})
}

// take returns, once, the batches kept for a fetch of l at offset at.
func (c *restCache) take(l *Log, at int64) (*kmsg.FetchResponseTopicPartition, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.l == l.logState && e.lo <= at && at <= e.hi {
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			if time.Since(e.t) > restMaxAge {
				return nil, "", false
			}
			return e.p, e.broker, true
		}
	}
	return nil, "", false
}
