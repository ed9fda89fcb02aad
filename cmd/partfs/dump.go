package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/partfs/partfs/inspect"
	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/kafkaname"
)

const dumpHelp = `usage: partfs dump [--json] [--print-data] [--verify-index]
                   [--offsets-decoder | --transaction-log-decoder | --cluster-metadata-decoder] FILE...

Prints partition files like Kafka's kafka-dump-log.sh: segments (.log) and raw
record sets, offset and time indexes (.index, .timeindex), transaction indexes
(.txnindex: one aborted transaction per line), and checkpoint files
(recovery-point-offset-checkpoint, leader-epoch-checkpoint, ...).

examples:
  partfs dump data/orders-0/00000000000000000000.log
  partfs dump --json --print-data data/orders-0/00000000000000000000.log | jq .value
  partfs dump --verify-index data/orders-0/00000000000000000000.index
  partfs dump data/recovery-point-offset-checkpoint
  partfs dump --offsets-decoder data/__consumer_offsets-7/00000000000000000000.log
  partfs dump --json --cluster-metadata-decoder data/__cluster_metadata-0/00000000000000000000.log | jq .decoded
`

func dumpCmd(args []string) int {
	fl := flag.NewFlagSet("dump", flag.ContinueOnError)
	fl.Usage = func() { fmt.Fprint(fl.Output(), dumpHelp, "\nflags:\n"); fl.PrintDefaults() }
	var opt inspect.DumpOptions
	fl.BoolVar(&opt.JSON, "json", false, "one JSON object per record or index entry")
	fl.BoolVar(&opt.PrintData, "print-data", false, "print keys, values and headers of records")
	fl.BoolVar(&opt.VerifyIndex, "verify-index", false, "check index entries against the segment beside them")
	var offsets, txns, meta bool
	fl.BoolVar(&offsets, "offsets-decoder", false, "decode records as __consumer_offsets' offset commits and group metadata (implies --print-data)")
	fl.BoolVar(&txns, "transaction-log-decoder", false, "decode records as __transaction_state's transaction metadata (implies --print-data)")
	fl.BoolVar(&meta, "cluster-metadata-decoder", false, "decode records as __cluster_metadata's KRaft metadata records (implies --print-data)")
	if code, done := parseArgs(fl, args, os.Stdout, os.Stderr); done {
		return code
	}
	if what := argCount(fl.Args(), true, "FILE"); what != "" {
		return refuse(os.Stderr, "dump", what)
	}
	for _, d := range []struct {
		on bool
		t  internaltopic.Topic
	}{{offsets, internaltopic.ConsumerOffsets}, {txns, internaltopic.TransactionState}, {meta, internaltopic.ClusterMetadata}} {
		if d.on && opt.Decoder != internaltopic.None {
			return refuse(os.Stderr, "dump", "give at most one of --offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder")
		}
		if d.on {
			opt.Decoder = d.t
		}
	}
	status := 0
	for _, file := range fl.Args() {
		if err := dumpFile(os.Stdout, file, opt); err != nil {
			fmt.Fprintf(os.Stderr, "partfs dump: %v\n", err)
			status = 1
		}
	}
	return status
}

func dumpFile(w io.Writer, file string, opt inspect.DumpOptions) error {
	if fi, err := os.Stat(file); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return fmt.Errorf("%s is empty (0 bytes): nothing to dump", file)
	}
	if !opt.JSON {
		fmt.Fprintf(w, "Dumping %s\n", file)
	}
	name := filepath.Base(file)
	switch {
	case strings.HasSuffix(name, kafkaname.IndexSuffix) || strings.HasSuffix(name, kafkaname.TimeIndexSuffix):
		return inspect.DumpIndex(w, file, opt)
	case strings.HasSuffix(name, kafkaname.TxnIndexSuffix):
		return inspect.DumpTxnIndex(w, file, opt)
	case isSnapshot(name):
		return inspect.DumpLog(w, file, opt)
	case strings.HasSuffix(name, "checkpoint") || name == kafkaname.PartitionMetadataFile || name == kafkaname.MetaPropertiesFile || name == kafkaname.CleanShutdownFile:
		return inspect.DumpCheckpoint(w, file, opt)
	default:
		return inspect.DumpLog(w, file, opt)
	}
}

// isSnapshot reports that name is a KRaft metadata snapshot, a log of
// record batches despite its .checkpoint suffix.
func isSnapshot(name string) bool {
	_, _, ok := kafkaname.ParseSnapshotCheckpoint(name)
	return ok
}
