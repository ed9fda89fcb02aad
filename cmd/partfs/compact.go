package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/compact"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/progress"
	"github.com/partfs/partfs/vfs"
)

// configFlags collects repeated --config KEY=VALUE flags.
type configFlags map[string]string

func (c configFlags) String() string { return fmt.Sprint(map[string]string(c)) }

func (c configFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want KEY=VALUE")
	}
	c[k] = v
	return nil
}

const compactHelp = `usage: partfs compact [flags] DATADIR [TOPIC...]

Runs the log cleaner once over the compacted partitions (cleanup.policy
containing compact) of an unmounted DATADIR, or of the named topics only.
Progress goes to stderr (redrawn on a terminal, periodic lines otherwise);
the summary (bytes read, written, records removed) to stdout, after a line
for each compacted partition not cleaned saying why.

examples:
  partfs compact ./data
  partfs compact --force ./data users
  partfs compact --config min.cleanable.dirty.ratio=0.1 ./data

flags:
`

// compactCmd is `partfs compact [flags] DATADIR [TOPIC...]`: the log cleaner
// run once over an unmounted data directory.
func compactCmd(args []string) int {
	return runCompact(args, os.Stdout, os.Stderr)
}

func runCompact(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("compact", flag.ContinueOnError)
	fl.SetOutput(stderr)
	force := fl.Bool("force", false, "clean every compacted partition with dirty data, whatever its dirty ratio")
	var lf logFlags
	lf.register(fl, "warn")
	dedupe := fl.Int64("dedupe-buffer-size", compact.DefaultDedupeBufferSize, "offset map memory in bytes (log.cleaner.dedupe.buffer.size)")
	defaults := configFlags{}
	fl.Var(defaults, "config", "KEY=VALUE topic default for topics that do not set KEY (repeatable)")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), compactHelp)
		fl.PrintDefaults()
	}
	if code, done := parseArgs(fl, args, stdout, stderr); done {
		return code
	}
	if what := argCount(fl.Args(), true, "DATADIR"); what != "" {
		return refuse(stderr, "compact", what)
	}
	logger, err := lf.logger(stderr, "compact")
	if err != nil {
		return refuse(stderr, "compact", err.Error())
	}
	sum, err := compactDir(fl.Arg(0), fl.Args()[1:], *force, *dedupe, defaults, logger, stderr)
	for _, why := range sum.Skipped {
		fmt.Fprintln(stdout, "not cleaned:", why)
	}
	fmt.Fprintln(stdout, sum)
	if err != nil {
		fmt.Fprintln(stderr, "partfs compact:", err)
		return 1
	}
	return 0
}

func compactDir(dir string, topics []string, force bool, dedupe int64, defaults map[string]string, logger *logrus.Entry, stderr io.Writer) (sum compact.Summary, err error) {
	store, err := logstore.Open(dir, logstore.Options{Logger: logger, Defaults: defaults, NoBackground: true,
		FS: vfs.NewBudgetFS(vfs.Beneath(dir), vfs.OpenFileBudget())})
	if err != nil {
		return sum, err
	}
	defer func() {
		if cerr := store.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", dir, cerr)
		}
	}()
	for _, t := range topics {
		if _, err := store.Partitions(t); err != nil {
			return sum, fmt.Errorf("topic %q: %w", t, err)
		}
	}
	unopened := unopenedPartitions(store, topics)
	defer func() {
		sum.Skipped = append(sum.Skipped, unopened...)
		if err == nil && len(unopened) > 0 {
			err = fmt.Errorf("%d partitions could not be opened, so not cleaned", len(unopened))
		}
	}()
	targets := compact.Targets(store, topics...)
	c := compact.NewCleaner(compact.Options{Logger: logger, DedupeBufferSize: dedupe})
	var total int64
	for _, t := range targets {
		total += c.Estimate(t, force)
	}
	rep := progress.Start(stderr, "compact", total, progress.Options{})
	c = compact.NewCleaner(compact.Options{Logger: logger, DedupeBufferSize: dedupe, Progress: rep.Add})
	sum, err = c.CleanAll(targets, force)
	rep.Done(fmt.Sprintf("%d records removed", sum.RecordsRemoved))
	return sum, err
}

// unopenedPartitions lists, with the reason, the partitions of topics (all
// when none are named) that the store found but could not open.
func unopenedPartitions(store *logstore.Store, topics []string) []string {
	if len(topics) == 0 {
		topics, _ = store.Topics()
	}
	var out []string
	for _, t := range topics {
		ns, _ := store.PartitionNumbers(t)
		for _, n := range ns {
			if _, err := store.Log(t, n); err != nil {
				out = append(out, err.Error())
			}
		}
	}
	return out
}
