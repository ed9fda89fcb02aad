// Command partfs keeps Kafka-style partition logs on local disk and mounts
// them as a FUSE filesystem. This package holds flags and wiring only.
package main

import (
	"fmt"
	"io"
	"os"
)

type command struct {
	name    string
	summary string
	run     func(args []string) int
}

func commands() []command {
	return []command{
		{"mount", "serve DATADIR on MOUNTPOINT until SIGINT/SIGTERM or umount", mountCmd},
		{"dump", "print segment, index and checkpoint files (like kafka-dump-log.sh)", dumpCmd},
		{"check", "verify every segment and index of DATADIR (mounted or not)", checkCmd},
		{"compact", "run the log cleaner once on an unmounted DATADIR", compactCmd},
		{"salvage", "copy a damaged DATADIR keeping every valid batch, past corrupt regions", salvageCmd},
		{"dev-cluster", "serve a local in-memory Kafka-protocol cluster for demos and tests", devClusterCmd},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args: help asked for goes to stdout (exit 0),
// a missing or unknown command is refused in one line and a hint on
// stderr (exit 2).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "partfs: no command given\nRun 'partfs --help' for the commands.")
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:])
		}
	}
	fmt.Fprintf(stderr, "partfs: unknown command %q\nRun 'partfs --help' for the commands.\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: partfs COMMAND [flags] ARGS...")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'partfs COMMAND --help' for a command's flags and examples, 'partfs --version' for the version.")
}
