package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/sirupsen/logrus"
)

// logFlags are the logging flags every command shares.
type logFlags struct{ level, format string }

func (lf *logFlags) register(fl *flag.FlagSet, defaultLevel string) {
	fl.StringVar(&lf.level, "log-level", defaultLevel, "trace|debug|info|warn|error")
	fl.StringVar(&lf.format, "log-format", "text", "text|json")
}

// logger builds the logrus logger the flags describe, tagged with cmd.
func (lf *logFlags) logger(w io.Writer, cmd string) (*logrus.Entry, error) {
	lvl, err := logrus.ParseLevel(lf.level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	l := logrus.New()
	l.SetOutput(w)
	l.SetLevel(lvl)
	switch lf.format {
	case "text":
		l.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})
	case "json":
		l.SetFormatter(&logrus.JSONFormatter{})
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", lf.format)
	}
	return logrus.NewEntry(l).WithField("cmd", cmd), nil
}
