package compact

import (
	"sort"

	"github.com/partfs/partfs/record"
)

// Control record types of transaction markers (ControlRecordType).
const (
	controlAbort  = 0
	controlCommit = 1
)

// txnState follows the transactions through one cleaning round, as
// Kafka's CleanedTransactionMetadata: it says which
// data batches belong to aborted transactions (their records all go) and
// which markers may be retired (an ABORT once no batch of its transaction
// is left, a COMMIT whose transaction had no batch in the pass), and keeps
// the aborted transactions whose markers stay in the cleaned segment's
// .txnindex.
type txnState struct {
	pending   []AbortedTxn           // by first offset, not yet reached
	added     map[[2]int64]bool      // producer and first offset of each added
	aborted   map[int64]*abortedSeen // producer -> its aborted transaction under way
	committed map[int64]bool         // producers with a committed transaction under way
	cleaned   Cleaned                // the cleaned segment being written
}

type abortedSeen struct {
	txn  AbortedTxn
	seen bool // a batch of it was read in this pass
}

func newTxnState() *txnState {
	return &txnState{added: map[[2]int64]bool{}, aborted: map[int64]*abortedSeen{}, committed: map[int64]bool{}}
}

// add adds the aborted transactions of the next segment (each once).
func (s *txnState) add(txns []AbortedTxn) {
	for _, t := range txns {
		if k := [2]int64{t.ProducerID, t.FirstOffset}; !s.added[k] {
			s.added[k] = true
			s.pending = append(s.pending, t)
		}
	}
	sort.SliceStable(s.pending, func(i, j int) bool { return s.pending[i].FirstOffset < s.pending[j].FirstOffset })
}

// reach starts the aborted transactions that begin at or before offset.
func (s *txnState) reach(offset int64) {
	for len(s.pending) > 0 && s.pending[0].FirstOffset <= offset {
		t := s.pending[0]
		s.pending = s.pending[1:]
		if s.aborted[t.ProducerID] == nil {
			s.aborted[t.ProducerID] = &abortedSeen{txn: t}
		}
	}
}

// onData notes a data batch and reports whether it belongs to an aborted
// transaction (then none of its records stays).
func (s *txnState) onData(h *record.BatchHeader) bool {
	s.reach(h.LastOffset())
	if !h.IsTransactional() {
		return false
	}
	if a := s.aborted[h.ProducerID]; a != nil {
		a.seen = true
		return true
	}
	s.committed[h.ProducerID] = true
	return false
}

// onControl notes a control batch (typ its record's type, -1 if it has no
// record) and reports whether it may be retired once its delete horizon
// has passed. An ABORT that stays keeps its transaction in the cleaned
// segment's .txnindex.
func (s *txnState) onControl(h *record.BatchHeader, typ int) bool {
	s.reach(h.LastOffset())
	switch typ {
	case -1:
		return true // an empty control batch, cleaned before
	case controlAbort:
		a := s.aborted[h.ProducerID]
		delete(s.aborted, h.ProducerID)
		if a != nil && a.seen {
			s.cleaned.AddAbortedTxn(a.txn)
			return false
		}
		return true
	case controlCommit:
		had := s.committed[h.ProducerID]
		delete(s.committed, h.ProducerID)
		return !had
	}
	return false
}
