package compact_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/record"
)

// abortedTxn is the aborted transaction of writeTxnPartition's partition.
var abortedTxn = index.AbortedTxn{ProducerID: 5, FirstOffset: 1, LastOffset: 2, LastStableOffset: 1}

// openTxnPartition writes writeTxnPartition's partition into a new data
// directory and opens it with cleanup.policy=compact, returning the
// directory, the options, the store and the partition's log.
func openTxnPartition(t *testing.T) (string, logstore.Options, *logstore.Store, *logstore.Log) {
	dir := t.TempDir()
	writeTxnPartition(t, dir)
	opts := logstore.Options{NoBackground: true, Defaults: map[string]string{"cleanup.policy": "compact"}}
	st, err := logstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Log("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	return dir, opts, st, l
}

// writeTxnPartition writes a partition by hand: K=good, then K=aborted in
// an aborted transaction (with its ABORT marker and .txnindex entry), then
// J=j; a second segment holds X=x.
func writeTxnPartition(t *testing.T, dir string) {
	var e record.Encoder
	var seg []byte
	add := func(base int64, recs []record.Record, opt record.BatchOptions) {
		var err error
		if seg, err = e.AppendBatch(seg, base, recs, opt); err != nil {
			t.Fatal(err)
		}
	}
	txn := record.BatchOptions{Transactional: true, KeepProducer: true, ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0, PartitionLeaderEpoch: 0}
	add(0, []record.Record{{Timestamp: 10, Key: []byte("K"), Value: []byte("good")}}, record.BatchOptions{})
	add(1, []record.Record{{Timestamp: 11, Key: []byte("K"), Value: []byte("aborted")}}, txn)
	marker := txn
	marker.Control = true
	add(2, []record.Record{{Timestamp: 12, Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}}}, marker)
	add(3, []record.Record{{Timestamp: 13, Key: []byte("J"), Value: []byte("j")}}, record.BatchOptions{})
	var active []byte
	active, _ = e.AppendBatch(nil, 4, []record.Record{{Timestamp: 14, Key: []byte("X"), Value: []byte("x")}}, record.BatchOptions{})

	p := filepath.Join(dir, "t-0")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	txnIndex := index.AppendTxnEntry(nil, abortedTxn)
	for name, data := range map[string][]byte{
		"00000000000000000000.log": seg, "00000000000000000000.txnindex": txnIndex,
		"00000000000000000004.log": active,
	} {
		if err := os.WriteFile(filepath.Join(p, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAbortedTransactionsNeverWin checks that a record of an aborted
// transaction neither becomes its key's latest (the committed value stays)
// nor survives the cleaning (which would make it visible once the
// .txnindex of the old segment is gone).
func TestAbortedTransactionsNeverWin(t *testing.T) {
	dir, opts, st, l := openTxnPartition(t)
	want := "[{0 K good false} {3 J j false} {4 X x false}]"
	if got := fmt.Sprint(readAll(t, l)); got != want {
		t.Fatalf("before cleaning a consumer sees %s, want %s", got, want)
	}
	c := compact.NewCleaner(compact.Options{DedupeBufferSize: 1 << 16})
	sum, err := c.CleanAll(compact.Targets(st), true)
	if err != nil || sum.Cleaned != 1 {
		t.Fatalf("clean: %v %+v", err, sum)
	}
	if got := fmt.Sprint(readAll(t, l)); got != want {
		t.Fatalf("after cleaning a consumer sees %s, want %s", got, want)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "t-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	sc := record.NewBytesScanner(raw, "cleaned")
	var dec record.Decoder
	for sc.Next() {
		dec.Records(sc.Batch(), func(r *record.Record) bool {
			if string(r.Value) == "aborted" {
				t.Errorf("aborted record at %d survived the cleaning", r.Offset)
			}
			return true
		})
	}
	st, err = logstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _ = st.Log("t", 0)
	if got := fmt.Sprint(readAll(t, l)); got != want {
		t.Fatalf("after reopening a consumer sees %s, want %s", got, want)
	}
}

// batchesOf lists the batches of a segment file as "offset:kind" (kind d
// data, a ABORT marker, c COMMIT marker, e empty).
func batchesOf(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := record.NewBytesScanner(raw, path)
	var out []string
	for sc.Next() {
		h := sc.Batch().Header
		kind := "d"
		switch {
		case h.NumRecords == 0:
			kind = "e"
		case h.IsControl():
			kind = "a"
		}
		if h.IsControl() && h.NumRecords > 0 {
			if _, ok := h.DeleteHorizon(); ok {
				kind += "h"
			}
		}
		out = append(out, fmt.Sprintf("%d:%s", h.BaseOffset, kind))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(out)
}

// TestCleanerRetiresAbortedTransactionsAsKafka follows Kafka's cleaner over
// three passes of an aborted transaction whose producer has expired: the
// first deletes the emptied aborted batch and keeps the ABORT marker with
// its transaction in the cleaned segment's .txnindex; the second finds no
// batch of it left and gives the marker a delete horizon (no .txnindex
// entry any more); the third, past the horizon, retires the marker.
func TestCleanerRetiresAbortedTransactionsAsKafka(t *testing.T) {
	dir, _, st, l := openTxnPartition(t)
	defer st.Close()
	seg := filepath.Join(dir, "t-0", "00000000000000000000")
	want := "[{0 K good false} {3 J j false} {4 X x false}]"
	now := int64(10 * compact.DefaultProducerIDExpirationMs)
	for i, c := range []struct {
		at      int64
		batches string
		txn     []byte
	}{
		{now, "[0:d 2:a 3:d]", index.AppendTxnEntry(nil, abortedTxn)},
		{now, "[0:d 2:ah 3:d]", nil},
		{now + 86_400_000, "[0:d 3:d]", nil},
	} {
		if err := l.SetCleanerCheckpoint(0); err != nil {
			t.Fatal(err)
		}
		cl := compact.NewCleaner(compact.Options{DedupeBufferSize: 1 << 16, Now: func() time.Time { return time.UnixMilli(c.at) }})
		if sum, err := cl.CleanAll(compact.Targets(st), true); err != nil || sum.Cleaned != 1 {
			t.Fatalf("pass %d: %v %+v", i+1, err, sum)
		}
		if got := batchesOf(t, seg+".log"); got != c.batches {
			t.Fatalf("pass %d: batches %s, want %s", i+1, got, c.batches)
		}
		got, err := os.ReadFile(seg + ".txnindex")
		if os.IsNotExist(err) {
			err = nil
		}
		if err != nil || string(got) != string(c.txn) {
			t.Fatalf("pass %d: .txnindex %x %v, want %x", i+1, got, err, c.txn)
		}
		if got := fmt.Sprint(readAll(t, l)); got != want {
			t.Fatalf("pass %d: a consumer sees %s, want %s", i+1, got, want)
		}
	}
}
