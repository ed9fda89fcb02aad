package kafkalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// appender is a partition's idempotent producer: one append at a time,
// one batch in flight, so an append's batches follow each other and a
// resent batch keeps its sequence (the broker drops a duplicate).
type appender struct {
	mu    sync.Mutex
	pid   int64 // REQUIRES: mu held; producer ID, valid when have
	epoch int16 // REQUIRES: mu held
	seq   int32 // REQUIRES: mu held; sequence of the next batch's first record
	have  bool  // REQUIRES: mu held
}

// encoding is an append's encoder and buffers, pooled: a partition keeps
// none between appends (an Encoder's compressors alone are ~100 KiB).
type encoding struct {
	enc  record.Encoder
	buf  []byte // encoded batches
	ends []int  // their ends in buf
	cut  []byte // compressed re-encoding scratch
}

var encodings = sync.Pool{New: func() any { return new(encoding) }}

// putEncoding returns e to the pool unless its buffers grew beyond what
// is worth keeping.
func putEncoding(e *encoding) {
	if cap(e.buf) <= 4<<20 && cap(e.cut) <= 4<<20 {
		encodings.Put(e)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Append produces recs with acks=all and returns the first offset. The
// records go as one batch when they fit the topic's max.message.bytes,
// else as consecutive batches of at most that size, sent one after the
// other: they are contiguous unless another producer's batch lands
// between two of them, and a failure after the first leaves the earlier
// ones written (the error says how many records landed).
func (l *Log) Append(recs []record.Record) (int64, error) {
	w := l.where("")
	if l.s.opt.ReadOnly {
		return 0, fmt.Errorf("%s: append: %w", w, partlog.ErrReadOnly)
	}
	if len(recs) == 0 {
		return l.EndOffset(), nil
	}
	conf, err := l.s.appendConf(l.call, l.topic)
	if err != nil {
		return 0, err
	}
	if err := partlog.CheckKeyed(l.topic, l.Partition(), conf.Compacted(), recs); err != nil {
		return 0, fmt.Errorf("%s: %w", w, err)
	}
	a := &l.w
	a.mu.Lock()
	defer a.mu.Unlock()
	e := encodings.Get().(*encoding)
	defer putEncoding(e)
	counts, err := e.encode(recs, conf, l.s.opt.Now().UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("%s: append: %w", w, err)
	}
	defer l.wrote()
	first, next, prev := int64(-1), int64(-1), 0
	for i, end := range e.ends {
		base, err := l.produce(e.buf[prev:end], counts[i])
		if err != nil {
			if i > 0 {
				l.bump(first, next)
				return 0, fmt.Errorf("%w (after %d of the %d records were written at offsets %d..%d)", err, next-first, len(recs), first, next-1)
			}
			return 0, err
		}
		if first < 0 {
			first = base
		} else if base != next {
			l.bump(first, base+int64(counts[i]))
		}
		next, prev = base+int64(counts[i]), end
	}
	return first, nil
}

// wrote makes the next look at the offsets ask the cluster and closes
// the channel of Changed: an append of this mount is a change at once
// (partlog.Log's Changed), not only once a later look sees the offsets move.
func (l *Log) wrote() {
	l.stale()
	l.mu.Lock()
	l.announce()
	l.mu.Unlock()
}

// encode fills a.buf with recs as batches (a.ends) and returns the record
// count of each.
func (a *encoding) encode(recs []record.Record, conf *topicConf, now int64) ([]int32, error) {
	codec, err := conf.Codec()
	if err != nil {
		return nil, err
	}
	// Under LogAppendTime the broker stamps the batch, as it does for
	// Kafka's own producer: the batch goes as CreateTime.
	opt := record.BatchOptions{DefaultTimestampMs: now}
	limit := int64(conf.MaxMessageBytes)
	plan := limit
	if codec != record.None {
		plan -= limit/256 + 64 // room for the codec's framing of incompressible bytes
	}
	a.buf, a.ends, err = a.enc.AppendBatches(a.buf[:0], 0, recs, opt, int(plan), a.ends[:0])
	if err != nil {
		return nil, err
	}
	counts := make([]int32, len(a.ends))
	prev := 0
	for i, end := range a.ends {
		h, err := record.ParseHeader(a.buf[prev:end])
		if err != nil {
			return nil, err
		}
		counts[i] = h.NumRecords
		if codec == record.None && int64(end-prev) > limit {
			return nil, tooLarge(end-prev, limit)
		}
		prev = end
	}
	if codec != record.None {
		if len(counts) > 1 && int64(len(a.buf)) <= wholeTry*limit && a.whole(recs, opt, codec, limit) {
			return []int32{int32(len(recs))}, nil
		}
		if err := a.compress(recs, counts, opt, codec, limit); err != nil {
			return nil, err
		}
	}
	return counts, nil
}

// wholeTry bounds the compressed appends first encoded as one batch: one
// of more than this many times the limit uncompressed would need better
// compression than that to fit.
const wholeTry = 4

// whole encodes recs as one compressed batch into a.buf if it fits limit.
func (a *encoding) whole(recs []record.Record, opt record.BatchOptions, codec record.Codec, limit int64) bool {
	opt.Codec = codec
	out, err := a.enc.AppendBatch(a.cut[:0], 0, recs, opt)
	a.cut = out
	if err != nil || int64(len(out)) > limit {
		return false
	}
	a.buf, a.cut = a.cut, a.buf
	a.ends = append(a.ends[:0], len(a.buf))
	return true
}

// compress re-encodes the planned batches with codec.
func (a *encoding) compress(recs []record.Record, counts []int32, opt record.BatchOptions, codec record.Codec, limit int64) error {
	opt.Codec = codec
	a.cut, a.ends = a.cut[:0], a.ends[:0]
	from := 0
	for _, n := range counts {
		var err error
		start := len(a.cut)
		if a.cut, err = a.enc.AppendBatch(a.cut, 0, recs[from:from+int(n)], opt); err != nil {
			return err
		}
		if int64(len(a.cut)-start) > limit {
			return tooLarge(len(a.cut)-start, limit)
		}
		a.ends = append(a.ends, len(a.cut))
		from += int(n)
	}
	a.buf, a.cut = a.cut, a.buf
	return nil
}

func tooLarge(size int, limit int64) error {
	return fmt.Errorf("a record is %d bytes as a batch, above max.message.bytes %d: %w", size, limit, partlog.ErrTooLarge)
}

// stamp writes offset 0 and the producer's ID, epoch and sequence into
// batch and renews its CRC.
func stamp(batch []byte, pid int64, epoch int16, seq int32) {
	binary.BigEndian.PutUint64(batch[0:], 0)
	binary.BigEndian.PutUint64(batch[43:], uint64(pid))
	binary.BigEndian.PutUint16(batch[51:], uint16(epoch))
	binary.BigEndian.PutUint32(batch[53:], uint32(seq))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], castagnoli))
}

// produce sends one batch of n records to the leader until the cluster
// acknowledges it (acks=all), and returns its base offset. REQUIRES:
// l.w.mu held.
func (l *Log) produce(batch []byte, n int32) (int64, error) {
	a := &l.w
	var base int64
	var broker string
	err := l.call(l.where(""), "produce", func(ctx context.Context) error {
		fresh := false
		for try := 0; ; try++ {
			if !a.have {
				if err := a.init(ctx, l.s); err != nil {
					return err
				}
			}
			stamp(batch, a.pid, a.epoch, a.seq)
			id, addr, topicID, err := l.s.leader(ctx, l.topic, l.part, fresh)
			broker = addr
			if err != nil {
				return err
			}
			base, err = l.send(ctx, id, topicID, batch)
			switch {
			case err == nil:
				a.seq += n
				return nil
			case errors.Is(err, kerr.OutOfOrderSequenceNumber), errors.Is(err, kerr.InvalidProducerEpoch),
				errors.Is(err, kerr.UnknownProducerID), errors.Is(err, kerr.InvalidProducerIDMapping):
				a.have = false // the broker refused the batch: start a new producer
			case !retriable(err):
				return err
			default:
				fresh = true
			}
			l.s.opt.Logger.WithFields(logrus.Fields{"broker": addr, "topic": l.topic, "partition": l.part, "try": try}).
				WithError(err).Debug("produce again")
			if err := pause(ctx, try); err != nil {
				return err
			}
		}
	})
	if err != nil {
		// The batch may still land: the next append starts a new
		// producer rather than resend it under a new sequence.
		a.have = false
		if broker != "" {
			err = fmt.Errorf("leader %s: %w", broker, err)
		}
	}
	return base, err
}

// send sends one produce request and returns the base offset it got.
func (l *Log) send(ctx context.Context, leader int32, topicID [16]byte, batch []byte) (int64, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = int32(l.s.opt.Timeout.Milliseconds())
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = l.topic, topicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = l.part
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := l.s.cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return 0, err
	}
	resp := kresp.(*kmsg.ProduceResponse)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition == l.part {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					if p.ErrorMessage != nil {
						return 0, fmt.Errorf("%w (%s)", err, *p.ErrorMessage)
					}
					return 0, err
				}
				return p.BaseOffset, nil
			}
		}
	}
	return 0, errors.New("produce: answer without the partition")
}

// init gets a producer ID and epoch (InitProducerID, no transactions).
// REQUIRES: a.mu held.
func (a *appender) init(ctx context.Context, s *Store) error {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	for try := 0; ; try++ {
		resp, err := req.RequestWith(ctx, s.cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			a.pid, a.epoch, a.seq, a.have = resp.ProducerID, resp.ProducerEpoch, 0, true
			return nil
		}
		if !retriable(err) {
			return fmt.Errorf("init producer ID: %w", err)
		}
		if err := pause(ctx, try); err != nil {
			return err
		}
	}
}
