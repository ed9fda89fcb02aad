// Package devcluster owns the local Kafka-protocol cluster partfs offers for
// demos and tests (`partfs dev-cluster`): franz-go's in-process, in-memory
// cluster (kfake) listening on an address the caller chooses, with a topic
// default of one partition (as `mkdir` makes them). It is no Kafka: kfake
// ignores some topic configs and keeps data in memory unless given a
// directory of its own format.
package devcluster

import (
	"fmt"
	"net"
	"strconv"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Options configure a cluster.
type Options struct {
	// Listen is HOST:PORT of the first broker; broker i listens on PORT+i,
	// or each on a free port when PORT is 0.
	Listen string
	// Brokers is the number of brokers (default 1).
	Brokers int
	// Topics are created at start, one partition each.
	Topics []string
	// DataDir, if set, keeps the cluster's data there (kfake's own format)
	// across restarts; otherwise it is in memory only.
	DataDir string
	// Logger receives kfake's log lines (nil: none).
	Logger *logrus.Entry
}

// Start starts a cluster; Close it to stop.
func Start(o Options) (*kfake.Cluster, error) {
	host, portText, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("listen address %q: bad port", o.Listen)
	}
	n := max(o.Brokers, 1)
	ports := make([]int, n)
	for i := range ports {
		if port != 0 {
			ports[i] = port + i
		}
	}
	opts := []kfake.Opt{
		kfake.Ports(ports...),
		// kfake listens on 127.0.0.1:PORT; this puts it on the host asked for.
		kfake.ListenFn(func(network, addr string) (net.Listener, error) {
			_, p, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort(host, p))
		}),
		kfake.DefaultNumPartitions(1),
	}
	if len(o.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(1, o.Topics...))
	}
	if o.DataDir != "" {
		opts = append(opts, kfake.DataDir(o.DataDir))
	}
	if o.Logger != nil {
		opts = append(opts, kfake.WithLogger(logger{o.Logger}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start cluster on %s: %w", o.Listen, err)
	}
	return c, nil
}

// logger passes kfake's lines to logrus at the matching level.
type logger struct{ lg *logrus.Entry }

func (l logger) Logf(level kfake.LogLevel, format string, args ...any) {
	lvl := logrus.DebugLevel
	switch level {
	case kfake.LogLevelError:
		lvl = logrus.ErrorLevel
	case kfake.LogLevelWarn:
		lvl = logrus.WarnLevel
	case kfake.LogLevelInfo:
		lvl = logrus.InfoLevel
	}
	l.lg.Logf(lvl, format, args...)
}
