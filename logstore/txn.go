package logstore

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/partfs/partfs/record"
)

// abortedTxn is one .txnindex entry (34 bytes on disk: version int16,
// producerId, firstOffset, lastOffset, lastStableOffset int64, big-endian).
type abortedTxn struct {
	pid         int64
	first, last int64
}

const txnEntrySize = 34

// parseTxnIndex reads the entries of a .txnindex file's bytes.
func parseTxnIndex(b []byte, file string) ([]abortedTxn, error) {
	if len(b)%txnEntrySize != 0 {
		return nil, fmt.Errorf("%s: size %d is not a multiple of %d", file, len(b), txnEntrySize)
	}
	out := make([]abortedTxn, 0, len(b)/txnEntrySize)
	for p := 0; p < len(b); p += txnEntrySize {
		e := b[p : p+txnEntrySize]
		if e[0] != 0 {
			return out, fmt.Errorf("%s: at position %d: unknown version %d", file, p, e[0])
		}
		out = append(out, abortedTxn{
			pid:   int64(binary.BigEndian.Uint64(e[2:])),
			first: int64(binary.BigEndian.Uint64(e[10:])),
			last:  int64(binary.BigEndian.Uint64(e[18:])),
		})
	}
	return out, nil
}

// addTxns merges entries into the log's sorted list. REQUIRES: mu held.
func (l *Log) addTxns(ts []abortedTxn) {
	l.txns = append(l.txns, ts...)
	sort.Slice(l.txns, func(i, j int) bool { return l.txns[i].first < l.txns[j].first })
}

// abortedIn returns the aborted transactions overlapping [base, next).
func (l *Log) abortedIn(base, next int64) []abortedTxn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.txns) == 0 {
		return nil
	}
	var out []abortedTxn
	for _, t := range l.txns {
		if t.first < next && t.last >= base {
			out = append(out, t)
		}
	}
	return out
}

// abortedFor narrows aborted to the transactions of h's producer, or nil
// when h is not transactional.
func abortedFor(aborted []abortedTxn, h *record.BatchHeader) []abortedTxn {
	if len(aborted) == 0 || !h.IsTransactional() {
		return nil
	}
	var out []abortedTxn
	for _, t := range aborted {
		if t.pid == h.ProducerID && t.first <= h.LastOffset() && t.last >= h.BaseOffset {
			out = append(out, t)
		}
	}
	return out
}

func isAborted(txns []abortedTxn, offset int64) bool {
	for _, t := range txns {
		if t.first <= offset && offset <= t.last {
			return true
		}
	}
	return false
}
