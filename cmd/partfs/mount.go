package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/compact"
	pfs "github.com/partfs/partfs/fs"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/metrics"
)

type mountFlags struct {
	readOnly, allowOther, debugFUSE bool
	logLevel, logFormat, cpuProfile string
	config                          configFlags
	datadir, mountpoint             string
}

func parseMountFlags(args []string, stderr io.Writer) (*mountFlags, error) {
	mf := &mountFlags{config: configFlags{}}
	fl := flag.NewFlagSet("partfs mount", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.BoolVar(&mf.readOnly, "read-only", false, "refuse every change (EROFS); recover only in memory")
	fl.BoolVar(&mf.allowOther, "allow-other", false, "let users other than the mounting one use the mount")
	fl.BoolVar(&mf.debugFUSE, "debug-fuse", false, "log every FUSE request")
	fl.StringVar(&mf.logLevel, "log-level", "info", "trace|debug|info|warn|error")
	fl.StringVar(&mf.logFormat, "log-format", "text", "text|json")
	fl.StringVar(&mf.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole mount to this file")
	fl.Var(mf.config, "config", "KEY=VALUE topic default for this mount (repeatable; not stored)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: partfs mount [flags] DATADIR MOUNTPOINT\n\nServes DATADIR on MOUNTPOINT in the foreground until SIGINT/SIGTERM or umount.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	if fl.NArg() != 2 {
		fl.Usage()
		return nil, errors.New("need DATADIR and MOUNTPOINT")
	}
	mf.datadir, mf.mountpoint = fl.Arg(0), fl.Arg(1)
	return mf, nil
}

func mountLogger(level, format string, w io.Writer) (*logrus.Entry, error) {
	l := logrus.New()
	l.SetOutput(w)
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	l.SetLevel(lvl)
	switch format {
	case "text":
		l.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})
	case "json":
		l.SetFormatter(&logrus.JSONFormatter{})
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	return logrus.NewEntry(l), nil
}

// mountCmd serves DATADIR on MOUNTPOINT until a signal or umount, then
// closes the store cleanly (flush, checkpoints, clean-shutdown marker).
func mountCmd(args []string) int {
	mf, err := parseMountFlags(args, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "partfs mount:", err)
		return 2
	}
	lg, err := mountLogger(mf.logLevel, mf.logFormat, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "partfs mount:", err)
		return 2
	}
	if mf.cpuProfile != "" {
		f, err := os.Create(mf.cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "partfs mount:", err)
			return 2
		}
		_ = pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if err := serve(mf, lg); err != nil {
		lg.WithError(err).Error("partfs mount failed")
		fmt.Fprintln(os.Stderr, "partfs mount:", err)
		return 1
	}
	return 0
}

func serve(mf *mountFlags, lg *logrus.Entry) error {
	cleaner, cleanerOn, defaults, err := compact.ParseBrokerConfig(mf.config)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	st, err := logstore.Open(mf.datadir, logstore.Options{Logger: lg, Defaults: defaults, ReadOnly: mf.readOnly})
	if err != nil {
		return fmt.Errorf("open %s: %w", mf.datadir, err)
	}
	mets := metrics.New(st)
	stopCleaner := func() {}
	if cleanerOn && !mf.readOnly {
		cleaner.OnCleaned = mets.Cleaned
		stopCleaner = compact.Start(st, cleaner)
	}
	fsys := pfs.New(pfs.Options{Store: st, Logger: lg, Metrics: mets})
	srv, err := fsys.Mount(mf.mountpoint, pfs.MountOptions{AllowOther: mf.allowOther, Debug: mf.debugFUSE, FsName: mf.datadir})
	if err != nil {
		stopCleaner()
		_ = st.Close()
		return fmt.Errorf("mount on %s: %w (a dead mount there? try: umount -l %s)", mf.mountpoint, err, mf.mountpoint)
	}
	lg.WithFields(logrus.Fields{"datadir": mf.datadir, "mountpoint": mf.mountpoint, "read_only": mf.readOnly}).Info("mounted")
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(stop)
	go func() {
		for sig := range stop {
			lg.WithField("signal", sig.String()).Info("unmounting")
			if err := srv.Unmount(); err != nil {
				lg.WithError(err).Warn("unmount busy; detaching lazily")
				_ = syscall.Unmount(mf.mountpoint, syscall.MNT_DETACH)
			}
		}
	}()
	srv.Wait()
	lg.Info("unmounted; closing the store")
	stopCleaner()
	ferr := fsys.Close()
	if err := st.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	if ferr != nil {
		lg.WithError(ferr).Warn("position sidecars not saved; the next mount recomputes them")
	}
	lg.Info("clean shutdown")
	return nil
}
