package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/partfs/partfs/devcluster"
)

const devClusterHelp = `usage: partfs dev-cluster [flags]

Starts a local in-memory Kafka-protocol cluster (franz-go's kfake) for demos
and tests, and serves it until SIGINT or SIGTERM. Its bootstrap address (the
brokers, comma-separated) is printed alone on the first line of stdout.
Kafka clients (kcat, franz-go, librdkafka) and partfs mount --kafka talk to
it as to a cluster. It is no Kafka: data is in memory unless --data-dir is
given, some topic configs are ignored, and LogAppendTime is not applied.

examples:
  partfs dev-cluster --listen 127.0.0.1:9092
  partfs dev-cluster --listen 127.0.0.1:0 --topic orders --topic users
  kcat -P -b 127.0.0.1:9092 -t orders -p 0 <<< 'hello'

flags:
`

// topicFlags collects repeated --topic NAME flags.
type topicFlags []string

func (t *topicFlags) String() string { return strings.Join(*t, ",") }

func (t *topicFlags) Set(s string) error {
	if s == "" {
		return errors.New("empty topic name")
	}
	*t = append(*t, s)
	return nil
}

// devClusterCmd is `partfs dev-cluster [flags]`.
func devClusterCmd(args []string) int {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(stop)
	return runDevCluster(args, os.Stdout, os.Stderr, stop)
}

func runDevCluster(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fl := flag.NewFlagSet("dev-cluster", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var o devcluster.Options
	fl.StringVar(&o.Listen, "listen", "127.0.0.1:9092", "HOST:PORT of the first broker (port 0: a free port; broker i listens on PORT+i)")
	fl.IntVar(&o.Brokers, "brokers", 1, "number of brokers")
	var topics topicFlags
	fl.Var(&topics, "topic", "NAME of a topic to create at start, one partition (repeatable)")
	fl.StringVar(&o.DataDir, "data-dir", "", "keep the cluster's data in this directory (kfake's own format, not a Kafka log.dirs)")
	var lf logFlags
	lf.register(fl, "info")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), devClusterHelp)
		fl.PrintDefaults()
	}
	if code, done := parseArgs(fl, args, stdout, stderr); done {
		return code
	}
	if what := argCount(fl.Args(), false); what != "" {
		return refuse(stderr, "dev-cluster", what)
	}
	if o.Brokers < 1 {
		return refuse(stderr, "dev-cluster", fmt.Sprintf("--brokers %d: want at least 1", o.Brokers))
	}
	o.Topics = topics
	lg, err := lf.logger(stderr, "dev-cluster")
	if err != nil {
		return refuse(stderr, "dev-cluster", err.Error())
	}
	o.Logger = lg.WithField("component", "kfake")
	c, err := devcluster.Start(o)
	if err != nil {
		lg.WithError(err).Error("cannot start the cluster")
		return 1
	}
	addrs := strings.Join(c.ListenAddrs(), ",")
	fmt.Fprintln(stdout, addrs)
	lg.WithField("bootstrap", addrs).Info("cluster listening; SIGINT or SIGTERM stops it")
	sig := <-stop
	lg.WithField("signal", sig.String()).Info("stopping")
	c.Close()
	return 0
}
