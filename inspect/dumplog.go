package inspect

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// DumpLog prints a segment (.log) or a raw record set like Kafka's
// kafka-dump-log.sh: one line per batch (per message for V0/V1), and with
// PrintData one "| offset: ..." line per record with its key and payload.
// With JSON it prints one object per record instead:
// {"batch_offset":0,"magic":2,"codec":"none","offset":0,"timestamp":...,"key":...,"value":...,"headers":[...]}
// (key/value/headers as docs/spec.md §3; control batches' records carry "control":true).
// At a corrupt batch it prints what was valid before it and returns the
// error, which names the file and position. A partial tail (a record set cut
// mid-batch, a crash mid-append) is reported the same way, after Kafka's
// "Found N invalid bytes at the end of NAME" line in text mode.
func DumpLog(w io.Writer, file string, opt DumpOptions) error {
	f, st, err := vfs.OpenStat(vfs.Default, file, os.O_RDONLY)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	d := &logDumper{w: bw, opt: opt}
	if !opt.JSON && strings.HasSuffix(file, kafkaname.LogSuffix) {
		if base, err := baseOffsetOf(file); err == nil {
			fmt.Fprintf(bw, "Log starting offset: %d\n", base)
		}
	}
	err = d.dump(record.NewScanner(f, 0, st.Size(), file), st.Size(), file)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// logDumper prints batches and records; buf is reused for every line.
type logDumper struct {
	w   *bufio.Writer
	opt DumpOptions
	dec record.Decoder
	buf []byte
}

func (d *logDumper) dump(s *record.Scanner, size int64, file string) error {
	for s.Next() {
		b := s.Batch()
		if !d.opt.JSON {
			d.writeLine(appendBatchLine(d.buf[:0], b))
		}
		if d.opt.JSON || d.opt.PrintData || d.opt.Decoder != internaltopic.None {
			if err := d.records(b); err != nil {
				return err
			}
		}
	}
	err := s.Err()
	if errors.Is(err, record.ErrTruncated) && !d.opt.JSON {
		name := file[strings.LastIndexByte(file, '/')+1:]
		fmt.Fprintf(d.w, "Found %d invalid bytes at the end of %s\n", size-s.Pos(), name)
	}
	return err
}

func (d *logDumper) writeLine(line []byte) {
	d.buf = append(line, '\n')
	d.w.Write(d.buf)
}

func (d *logDumper) records(b *record.Batch) error {
	return d.dec.Records(b, func(r *record.Record) bool {
		if d.opt.JSON {
			d.writeLine(appendRecordJSON(d.buf[:0], b, r, d.opt.Decoder))
		} else {
			d.writeLine(appendRecordLine(d.buf[:0], b, r, d.opt.Decoder))
		}
		return true
	})
}

// appendRecordJSON writes the dump's JSON object: the batch fields, then
// jsonl.Append's fields.
// With a decoder, "decoded" holds the record as the internal topic's
// schemas read it (internaltopic.Topic.AppendJSON).
func appendRecordJSON(dst []byte, b *record.Batch, r *record.Record, dec internaltopic.Topic) []byte {
	h := &b.Header
	dst = append(dst, `{"batch_offset":`...)
	dst = strconv.AppendInt(dst, h.BaseOffset, 10)
	dst = append(dst, `,"magic":`...)
	dst = strconv.AppendInt(dst, int64(h.Magic), 10)
	dst = append(dst, `,"codec":"`...)
	dst = append(dst, h.Codec().String()...)
	dst = append(dst, '"')
	if h.IsControl() {
		dst = append(dst, `,"control":true`...)
	}
	at := len(dst)
	dst = jsonl.Append(dst, r)
	dst[at] = ',' // AppendJSON's opening brace joins the batch fields
	if dec != internaltopic.None && !h.IsControl() {
		dst = append(dst[:len(dst)-1], `,"decoded":`...)
		dst = dec.AppendJSON(dst, r)
		dst = append(dst, '}')
	}
	return dst
}

// appendBatchLine writes kafka-dump-log's batch line.
func appendBatchLine(dst []byte, b *record.Batch) []byte {
	h := &b.Header
	if h.Magic >= 2 {
		dst = fmt.Appendf(dst, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s",
			h.BaseOffset, h.LastOffset(), h.NumRecords, h.BaseSequence, lastSequence(h), h.ProducerID, h.ProducerEpoch,
			h.PartitionLeaderEpoch, h.IsTransactional(), h.IsControl(), deleteHorizon(h))
	} else {
		dst = fmt.Appendf(dst, "offset: %d", h.LastOffset())
	}
	return fmt.Appendf(dst, " position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: true",
		b.Pos, timestampType(h), h.MaxTimestamp, h.Size(), h.Magic, h.Codec(), h.CRC)
}

// appendRecordLine writes kafka-dump-log's "| offset: ..." record line;
// with a decoder, key and payload are the decoded JSON of each.
func appendRecordLine(dst []byte, b *record.Batch, r *record.Record, dec internaltopic.Topic) []byte {
	h := &b.Header
	dst = fmt.Appendf(dst, "| offset: %d %s: %d keySize: %d valueSize: %d",
		r.Offset, timestampType(h), r.Timestamp, size(r.Key), size(r.Value))
	if h.Magic >= 2 {
		dst = fmt.Appendf(dst, " sequence: %d headerKeys: [", sequence(h, r.Offset))
		for i, hd := range r.Headers {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, hd.Key...)
		}
		dst = append(dst, ']')
	}
	if h.IsControl() {
		return appendControl(dst, r)
	}
	if dec != internaltopic.None {
		return appendDecoded(dst, dec, r)
	}
	if r.Key != nil {
		dst = append(append(dst, " key: "...), r.Key...)
	}
	if r.Value != nil {
		dst = append(append(dst, " payload: "...), r.Value...)
	}
	return dst
}

var controlTypes = []string{"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"}

// appendControl describes a control record as kafka-dump-log does.
func appendControl(dst []byte, r *record.Record) []byte {
	if len(r.Key) < 4 {
		return append(dst, " controlType: UNKNOWN"...)
	}
	t := int16(binary.BigEndian.Uint16(r.Key[2:]))
	if t <= 1 && t >= 0 && len(r.Value) >= 6 {
		return fmt.Appendf(dst, " endTxnMarker: %s coordinatorEpoch: %d", controlTypes[t], int32(binary.BigEndian.Uint32(r.Value[2:])))
	}
	name := "UNKNOWN"
	if t >= 0 && int(t) < len(controlTypes) {
		name = controlTypes[t]
	}
	return fmt.Appendf(dst, " controlType: %s(%d)", name, t)
}

func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

func timestampType(h *record.BatchHeader) string {
	switch {
	case h.Magic == 0:
		return "NoTimestampType"
	case h.LogAppendTime():
		return "LogAppendTime"
	}
	return "CreateTime"
}

func deleteHorizon(h *record.BatchHeader) string {
	if ms, ok := h.DeleteHorizon(); ok {
		return "OptionalLong[" + strconv.FormatInt(ms, 10) + "]"
	}
	return "OptionalLong.empty"
}

// lastSequence and sequence follow Kafka's wrapping sequence arithmetic.
func lastSequence(h *record.BatchHeader) int32 {
	return sequence(h, h.LastOffset())
}

func sequence(h *record.BatchHeader, offset int64) int32 {
	if h.BaseSequence < 0 {
		return -1
	}
	return int32((int64(h.BaseSequence) + offset - h.BaseOffset) & 0x7fffffff)
}

// appendDecoded writes " key: K payload: V" with K and V decoded, as
// kafka-dump-log's decoders do; a record that does not decode gets
// " decodeError: ..." and its raw key and payload.
func appendDecoded(dst []byte, dec internaltopic.Topic, r *record.Record) []byte {
	d, err := dec.Decode(r.Key, r.Value)
	if err != nil {
		dst = fmt.Appendf(dst, " decodeError: %v", err)
		if r.Key != nil {
			dst = append(append(dst, " key: "...), r.Key...)
		}
		if r.Value != nil {
			dst = append(append(dst, " payload: "...), r.Value...)
		}
		return dst
	}
	dst = fmt.Appendf(dst, " type: %s", d.Type)
	if d.Key != nil {
		dst = append(dst, " key: "...)
		dst = internaltopic.AppendValue(dst, d.Key)
	}
	dst = append(dst, " payload: "...)
	return internaltopic.AppendValue(dst, d.Value)
}
