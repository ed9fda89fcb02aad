package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/partfs/partfs/inspect"
)

const checkHelp = `usage: partfs check DATADIR

Verifies every segment (sizes, CRCs, offsets) and index (entries increasing,
pointing at batch starts) of a data directory without changing anything.
The preallocated zero tails of active indexes (a mounted directory, or one
left by a crash or an unclean broker stop) are not damage: Kafka's loader
accepts them. Exits 0 when clean, 1 on damage (each problem names file and
position), 2 when DATADIR cannot be read. Progress (bytes checked, rate,
ETA) goes to stderr: redrawn on a terminal, a line every 5 s otherwise.

examples:
  partfs check ./data
  partfs check /var/lib/kafka/data && echo clean
`

func checkCmd(args []string) int {
	fl := flag.NewFlagSet("check", flag.ContinueOnError)
	fl.Usage = func() { fmt.Fprint(fl.Output(), checkHelp) }
	if code, done := parseArgs(fl, args, os.Stdout, os.Stderr); done {
		return code
	}
	if what := argCount(fl.Args(), false, "DATADIR"); what != "" {
		return refuse(os.Stderr, "check", what)
	}
	damaged, err := inspect.CheckProgress(os.Stdout, fl.Arg(0), os.Stderr)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "partfs check: %v\n", err)
		return 2
	case damaged:
		return 1
	}
	return 0
}
