package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/partfs/partfs/salvage"
)

const salvageHelp = `usage: partfs salvage SRC DST [TOPIC-PARTITION...]

Copies a damaged, unmounted data directory SRC to DST (new or empty),
keeping every valid batch: where Kafka's recovery drops everything after the
first bad batch of a segment, salvage skips the corrupt or torn region and
goes on at the next batch whose header, CRC and records are valid, with
offsets above the last one kept. Each skipped region is printed (file,
positions, offsets lost); progress goes to stderr. The copy's indexes and
checkpoints are rebuilt: it passes partfs check and mounts. SRC is only read.
Exits 0 when nothing was skipped, 1 when regions were skipped, 2 on error.

examples:
  partfs salvage /var/lib/kafka/data /srv/rescued
  partfs salvage ./data ./rescued orders-0 orders-3
`

func salvageCmd(args []string) int {
	fl := flag.NewFlagSet("salvage", flag.ContinueOnError)
	fl.Usage = func() { fmt.Fprint(fl.Output(), salvageHelp) }
	if code, done := parseArgs(fl, args, os.Stdout, os.Stderr); done {
		return code
	}
	if what := argCount(fl.Args(), true, "SRC", "DST"); what != "" {
		return refuse(os.Stderr, "salvage", what)
	}
	res, err := salvage.Run(fl.Arg(0), fl.Arg(1), salvage.Options{Partitions: fl.Args()[2:], Report: os.Stdout, Progress: os.Stderr})
	if err != nil {
		fmt.Fprintf(os.Stderr, "partfs salvage: %v\n", err)
		return 2
	}
	fmt.Printf("%d partitions, %d segments, %d batches (%d records) kept; %d regions skipped\n",
		res.Partitions, res.Segments, res.Batches, res.Records, len(res.Skips))
	if len(res.Skips) > 0 {
		return 1
	}
	return 0
}
