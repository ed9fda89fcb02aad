package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// Fetch sizes: a Read's first fetch asks for fetchMinBytes of the
// partition (most reads stop early: a position lookup reads up to the next
// checkpoint), each further one for twice as much, up to fetchMaxBytes. A
// first batch larger than that comes whole, as Kafka answers.
const (
	fetchMinBytes = 64 << 10
	fetchMaxBytes = 4 << 20
)

var decoders = sync.Pool{New: func() any { return new(record.Decoder) }}

// Read calls fn for each record of seg with offset >= from, in offset
// order, up to seg.Next: fetches from the partition's leader
// (read_committed), decoded by package record; control batches and
// records of aborted transactions are left out.
func (l *Log) Read(seg partlog.Segment, from int64, fn func(*record.Record) bool) error {
	from = max(from, seg.Base)
	dec := decoders.Get().(*record.Decoder)
	defer decoders.Put(dec)
	rd := reader{next: seg.Next, fn: fn, dec: dec, aborted: map[int64]bool{}}
	size := l.fetchSize(from)
	lo, hi := from, from // the offsets the last fetch covered
	defer func() { l.readEnded(lo, hi, size) }()
	var pr *printer // prints the tile when the Read starts at its first offset
	if first := seg.Next - seg.Size; from <= first {
		pr = l.newPrinter(seg.Base, first, seg.Next)
		defer func() { l.printed(seg.Base, pr) }()
	} else {
		rd.seek = l.newSeekCheck(seg.Base, from)
		defer func() { l.seekChecked(seg.Base, rd.seek) }()
	}
	for ; from < seg.Next; size = min(2*size, fetchMaxBytes) {
		p, broker, err := l.answer(from, size)
		if errors.Is(err, kerr.OffsetOutOfRange) {
			l.stale()
			start, end := l.offsets()
			if from < start {
				from = start
				continue
			}
			if from >= end {
				return nil
			}
		}
		if err != nil {
			return err
		}
		rd.pr = nil
		if pr != nil && pr.at == from {
			rd.pr = pr // the answer continues what pr printed
		}
		rd.file = fmt.Sprintf("%s: fetch at offset %d", l.where(broker), from)
		at, done, err := rd.batches(p, from)
		if rd.pr != nil {
			pr.mark()
		}
		if rd.rest >= 0 {
			l.s.rest.put(l, rd.restAt, rd.restLast, p, rd.rest, rd.restTxns, broker)
		}
		lo, hi = from, at
		if err != nil || done || at <= from {
			// at <= from: nothing more below the last stable offset
			return err
		}
		from = at
	}
	return nil
}

// answer returns the partition's answer to a fetch at offset from of size
// bytes: the rest of an earlier answer that an earlier Read did not pass
// (restCache), or a fetch.
func (l *Log) answer(from int64, size int32) (p *kmsg.FetchResponseTopicPartition, broker string, err error) {
	if p, broker, ok := l.s.rest.take(l, from); ok {
		return p, broker, nil
	}
	err = l.call(l.where(""), "fetch", func(ctx context.Context) error {
		p, broker, err = l.fetch(ctx, from, size)
		return err
	})
	return p, broker, err
}

// fetchSize is the size of a Read's first fetch: fetchMinBytes, or for a
// Read that starts inside what the last one fetched last (a sequential
// reader going on), the size that one had reached.
func (l *Log) fetchSize(from int64) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seqSize > 0 && from >= l.seqLo && from <= l.seqHi {
		return l.seqSize
	}
	return fetchMinBytes
}

// readEnded notes the offsets a Read's last fetch covered and the fetch
// size it had reached.
func (l *Log) readEnded(lo, hi int64, size int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seqLo, l.seqHi, l.seqSize = lo, hi, size
}

// fetch sends one fetch for offset from to the partition's leader,
// following a leader change, and returns the partition's answer.
func (l *Log) fetch(ctx context.Context, from int64, size int32) (*kmsg.FetchResponseTopicPartition, string, error) {
	fresh := false
	for try := 0; ; try++ {
		id, addr, topicID, err := l.s.leader(ctx, l.topic, l.part, fresh)
		if err != nil {
			return nil, addr, err
		}
		req := fetchRequest(l.topic, topicID, l.part, from, size)
		resp, err := l.s.cl.Broker(int(id)).Request(ctx, req)
		if err == nil {
			var p *kmsg.FetchResponseTopicPartition
			if p, err = fetchAnswer(resp.(*kmsg.FetchResponse), l.part); err == nil {
				return p, addr, nil
			}
		}
		if !retriable(err) {
			return nil, addr, fmt.Errorf("leader %s: %w", addr, err)
		}
		fresh = true
		if err := pause(ctx, try); err != nil {
			return nil, addr, fmt.Errorf("leader %s: %w", addr, err)
		}
	}
}

func fetchRequest(topic string, topicID [16]byte, part int32, from int64, size int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.ReplicaState.ID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = size
	req.IsolationLevel = 1
	req.SessionID = 0
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = part
	rp.CurrentLeaderEpoch = -1
	rp.FetchOffset = from
	rp.LastFetchedEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = size
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchAnswer finds the partition's answer in resp and its error.
func fetchAnswer(resp *kmsg.FetchResponse, part int32) (*kmsg.FetchResponseTopicPartition, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			p := &resp.Topics[i].Partitions[j]
			if p.Partition == part {
				return p, kerr.ErrorForCode(p.ErrorCode)
			}
		}
	}
	return nil, errors.New("fetch: answer without the partition")
}

// reader hands the records of fetch answers to a Read's callback.
type reader struct {
	next    int64
	fn      func(*record.Record) bool
	dec     *record.Decoder
	file    string
	aborted map[int64]bool // producers inside an aborted transaction
	pr      *printer       // prints the batches of this answer, if set
	seek    *seekCheck     // checks a Read from inside a tile, if set
	// rest is where the batch holding the first record the Read did not
	// pass begins in the answer (the tile ended, or fn stopped, inside
	// the answer), else -1; restAt is the offset the Read had reached
	// before that batch, restLast the batch's last offset, restTxns the
	// aborted transactions a fetch from there would be answered with
	rest             int
	restAt, restLast int64
	restTxns         []kmsg.FetchResponseTopicPartitionAbortedTransaction
}

// keepRest notes that the answer's batches from b on were not passed:
// at is where the Read had reached, txns the aborted transactions not yet
// met. A fetch from at would begin with b and report the transactions
// open at b (rd.aborted) and those after.
func (rd *reader) keepRest(b *record.Batch, at int64, txns []kmsg.FetchResponseTopicPartitionAbortedTransaction) {
	rd.rest, rd.restAt, rd.restLast = int(b.Pos), at, b.Header.LastOffset()
	rd.restTxns = rd.restTxns[:0]
	for pid := range rd.aborted {
		t := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		t.ProducerID, t.FirstOffset = pid, b.Header.BaseOffset
		rd.restTxns = append(rd.restTxns, t)
	}
	rd.restTxns = append(rd.restTxns, txns...)
}

// batches passes the wanted records of p's batches at or after offset
// from; it returns the offset after the last batch, and done when fn
// stopped the read or the tile ended.
func (rd *reader) batches(p *kmsg.FetchResponseTopicPartition, from int64) (int64, bool, error) {
	txns := p.AbortedTransactions
	sort.Slice(txns, func(i, j int) bool { return txns[i].FirstOffset < txns[j].FirstOffset })
	sc := record.NewBytesScanner(p.RecordBatches, rd.file)
	at := from
	rd.rest = -1
	for sc.Next() {
		b := sc.Batch()
		h := &b.Header
		if rd.pr != nil {
			rd.pr.batch(h)
		}
		rd.seek.batch(h, from)
		for len(txns) > 0 && txns[0].FirstOffset <= h.LastOffset() {
			rd.aborted[txns[0].ProducerID] = true
			txns = txns[1:]
		}
		switch {
		case h.Magic >= 2 && h.BaseOffset >= rd.next:
			rd.keepRest(b, at, txns)
			return at, true, nil
		case h.IsControl():
			delete(rd.aborted, h.ProducerID)
		case h.LastOffset() < at, h.IsTransactional() && rd.aborted[h.ProducerID]:
		default:
			stop := false
			err := rd.dec.Records(b, func(r *record.Record) bool {
				switch {
				case r.Offset < from:
					return true
				case r.Offset >= rd.next:
					stop = true
					return false
				}
				stop = !rd.fn(r)
				return !stop
			})
			if err != nil {
				return at, true, fmt.Errorf("%w: %w", partlog.ErrCorrupt, err)
			}
			if stop {
				rd.keepRest(b, at, txns)
				return at, true, nil
			}
		}
		at = max(at, h.LastOffset()+1)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, record.ErrTruncated) {
		return at, true, fmt.Errorf("%w: %w", partlog.ErrCorrupt, err)
	}
	return at, at >= rd.next, nil
}
