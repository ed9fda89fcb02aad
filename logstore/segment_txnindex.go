package logstore

import (
	"encoding/binary"
	"errors"
	"os"
	"sort"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// abortedTxn is one .txnindex entry (34 bytes on disk: version int16,
// producerId, firstOffset, lastOffset, lastStableOffset int64, big-endian).
type abortedTxn struct {
	pid         int64
	first, last int64
	lso         int64 // the last stable offset when the transaction ended
}

// parseTxnIndex reads the entries of a .txnindex file's bytes.
func parseTxnIndex(b []byte, file string) ([]abortedTxn, error) {
	es, err := index.ParseTxnIndex(b, file)
	out := make([]abortedTxn, len(es))
	for i, e := range es {
		out[i] = abortedTxn{pid: e.ProducerID, first: e.FirstOffset, last: e.LastOffset, lso: e.LastStableOffset}
	}
	return out, err
}

// appendTxnEntry appends t as a .txnindex entry.
func appendTxnEntry(dst []byte, t abortedTxn) []byte {
	return index.AppendTxnEntry(dst, index.AbortedTxn{ProducerID: t.pid, FirstOffset: t.first, LastOffset: t.last, LastStableOffset: t.lso})
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

// Control record types (ControlRecordType.java) of transaction markers.
const (
	controlAbort  = 0
	controlCommit = 1
)

// txnTracker rebuilds aborted transactions from markers while recovery
// scans batches, for data that has no .txnindex (Kafka rebuilds it from its
// producer state the same way): a producer's transaction starts at its first
// transactional batch after its last marker, and an ABORT marker ends it.
type txnTracker struct {
	ongoing map[int64]int64 // producer id -> first offset of its open transaction
	found   []abortedTxn
}

// observe notes one valid batch.
func (tt *txnTracker) observe(dec *record.Decoder, b *record.Batch) {
	h := &b.Header
	if h.Magic < 2 || !h.IsTransactional() {
		return
	}
	if !h.IsControl() {
		if _, ok := tt.ongoing[h.ProducerID]; !ok {
			tt.ongoing[h.ProducerID] = h.BaseOffset
		}
		return
	}
	typ := int16(-1)
	dec.Records(b, func(r *record.Record) bool {
		if len(r.Key) >= 4 {
			typ = int16(binary.BigEndian.Uint16(r.Key[2:]))
		}
		return false
	})
	first, open := tt.ongoing[h.ProducerID]
	delete(tt.ongoing, h.ProducerID)
	if typ == controlAbort && open {
		tt.found = append(tt.found, abortedTxn{pid: h.ProducerID, first: first, last: h.LastOffset(), lso: tt.stableAfter(h.LastOffset())})
	}
}

// stableAfter is Kafka's last stable offset once a transaction ending at
// marker completes (ProducerStateManager.lastStableOffset): the first
// offset of the earliest transaction still open, else marker+1. REQUIRES:
// the ending producer already removed from ongoing.
func (tt *txnTracker) stableAfter(marker int64) int64 {
	lso := marker + 1
	for _, first := range tt.ongoing {
		lso = min(lso, first)
	}
	return lso
}

// addFoundTxns merges the aborted transactions recovery found into the log
// and marks the record counts of the segments they touch for recounting.
// REQUIRES: mu held or the log not shared.
func (l *Log) addFoundTxns(found []abortedTxn) {
	var added []abortedTxn
	for _, t := range found {
		if !containsTxn(l.txns, t) {
			added = append(added, t)
		}
	}
	if len(added) == 0 {
		return
	}
	l.addTxns(added)
	if err := l.writeTxnIndexes(added); err != nil {
		l.logger.WithError(err).Warn("cannot write rebuilt transaction index")
	}
	for _, s := range l.segs {
		for _, t := range added {
			if t.first < s.next && t.last >= s.base {
				s.records = -1
			}
		}
	}
	l.logger.WithField("aborted_transactions", len(added)).Info("rebuilt aborted transactions from markers")
}

func containsTxn(ts []abortedTxn, t abortedTxn) bool {
	for _, x := range ts {
		if x.pid == t.pid && x.first <= t.last && t.first <= x.last {
			return true
		}
	}
	return false
}

// writeTxnIndexes appends entries to the .txnindex of the segment holding
// each transaction's marker (Kafka's AbortedTxn format), so that a clean
// open finds them.
// REQUIRES: mu held or the log not shared.
func (l *Log) writeTxnIndexes(added []abortedTxn) error {
	if l.readOnly {
		return nil
	}
	bySeg := map[int64][]byte{}
	for _, t := range added {
		s := l.segs[l.floorSegment(t.last)]
		bySeg[s.base] = appendTxnEntry(bySeg[s.base], t)
	}
	var errs []error
	for base, entries := range bySeg {
		path := segmentPath(l.dir, base, kafkaname.TxnIndexSuffix)
		old, _ := vfs.ReadFile(l.fs, path)
		errs = append(errs, vfs.WriteFileDurable(l.fs, path, append(old, entries...)))
	}
	return errors.Join(errs...)
}

// loadTxnIndexes reads the .txnindex of every live segment whose files
// (resolveLeftovers, in the order of l.segs) list one.
func (l *Log) loadTxnIndexes(files []segmentFiles) error {
	var errs []error
	for i, s := range l.segs {
		if i < len(files) && !files[i].txn {
			continue
		}
		path := segmentPath(l.dir, s.base, kafkaname.TxnIndexSuffix) + s.suffix
		data, err := vfs.ReadFile(l.fs, path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		ts, err := parseTxnIndex(data, path)
		l.addTxns(ts)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
