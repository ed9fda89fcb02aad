package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/compact"
	pfs "github.com/partfs/partfs/fs"
	"github.com/partfs/partfs/logstore"
	"github.com/partfs/partfs/metrics"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/progress"
	"github.com/partfs/partfs/vfs"
)

const mountHelp = `usage: partfs mount [flags] DATADIR MOUNTPOINT
       partfs mount --kafka HOST:PORT[,HOST:PORT...] [flags] MOUNTPOINT

Serves DATADIR (a Kafka-compatible log directory; created if missing) on
MOUNTPOINT in the foreground until SIGINT/SIGTERM or umount; then flushes,
writes checkpoints and the clean-shutdown marker, and exits 0.
--config log.cleaner.* keys set the background cleaner and
log.retention.check.interval.ms how often retention runs (default 30000);
other keys are topic defaults for this mount (not stored).

examples:
  partfs mount ./data ./mnt
  partfs mount --read-only /var/lib/kafka/data /mnt/kafka
  partfs mount --config segment.bytes=104857600 --config retention.ms=86400000 ./data ./mnt
  partfs mount --metrics-addr 127.0.0.1:9646 --log-format json ./data ./mnt
  partfs mount --kafka broker1:9092,broker2:9092 /mnt/kafka
  PARTFS_KAFKA_PASSWORD=... partfs mount --kafka b:9093 --kafka-tls --kafka-sasl scram-sha-512 --kafka-user me /mnt/kafka

flags:
`

type mountFlags struct {
	readOnly, allowOther, debugFUSE bool
	noPageCache                     bool
	batchBytes                      int
	log                             logFlags
	cpuProfile, metricsAddr         string
	config                          configFlags
	datadir, mountpoint             string
	kafka                           kafkaFlags
	schemas                         schemaFlags
}

// parseMountFlags parses the mount command line; done reports that the
// command should exit with code (--help, a bad flag).
func parseMountFlags(args []string, stdout, stderr io.Writer) (_ *mountFlags, code int, done bool) {
	mf := &mountFlags{config: configFlags{}}
	fl := flag.NewFlagSet("partfs mount", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.BoolVar(&mf.readOnly, "read-only", false, "refuse every change (EROFS); recover only in memory")
	fl.BoolVar(&mf.allowOther, "allow-other", false, "let users other than the mounting one use the mount")
	fl.BoolVar(&mf.debugFUSE, "debug-fuse", false, "log every FUSE request")
	fl.BoolVar(&mf.noPageCache, "no-page-cache", false, "with --read-only, read log and log.jsonl with direct I/O too (only a read-only mount caches them): a first read of a large log is faster, a re-read is not served from the kernel's cache")
	fl.IntVar(&mf.batchBytes, "batch-bytes", 0, "cut an uncompressed write() into record batches of at most this many bytes, as Kafka's producer batch.size (finding a record reads its batch whole); 0: one batch per write()")
	mf.log.register(fl, "info")
	fl.StringVar(&mf.metricsAddr, "metrics-addr", "", "also serve MOUNTPOINT/.metrics over HTTP on this address (e.g. 127.0.0.1:9646)")
	fl.StringVar(&mf.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole mount to this file")
	fl.Var(mf.config, "config", "KEY=VALUE topic default for this mount (repeatable; not stored)")
	mf.kafka.register(fl)
	mf.schemas.register(fl)
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), mountHelp)
		fl.PrintDefaults()
	}
	if code, done := parseArgs(fl, args, stdout, stderr); done {
		return nil, code, true
	}
	if mf.kafka.brokers != "" {
		if what := argCount(fl.Args(), false, "MOUNTPOINT"); what != "" {
			return nil, refuse(stderr, "mount", what+" (with --kafka, give only MOUNTPOINT)"), true
		}
		mf.mountpoint = fl.Arg(0)
		return mf, 0, false
	}
	if what := argCount(fl.Args(), false, "DATADIR", "MOUNTPOINT"); what != "" {
		return nil, refuse(stderr, "mount", what), true
	}
	mf.datadir, mf.mountpoint = fl.Arg(0), fl.Arg(1)
	return mf, 0, false
}

// mountCmd serves DATADIR on MOUNTPOINT until a signal or umount, then
// closes the store cleanly (flush, checkpoints, clean-shutdown marker).
func mountCmd(args []string) int {
	mf, code, done := parseMountFlags(args, os.Stdout, os.Stderr)
	if done {
		return code
	}
	lg, err := mf.log.logger(os.Stderr, "mount")
	if err != nil {
		return refuse(os.Stderr, "mount", err.Error())
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
		// Once: a plain line for a person, a log record for a machine.
		if mf.log.format == "json" {
			lg.WithError(err).Error("partfs mount failed")
		} else {
			fmt.Fprintln(os.Stderr, "partfs mount:", err)
		}
		return 1
	}
	return 0
}

func serve(mf *mountFlags, lg *logrus.Entry) error {
	raiseFDLimit(lg)
	// Signals are caught from the start: one that arrives while the store
	// opens or the mount starts is handled once the mount is up.
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(stop)
	cleaner, cleanerOn, defaults, err := compact.ParseBrokerConfig(mf.config)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	if err := checkMountpoint(mf.mountpoint); err != nil {
		return err
	}
	if err := checkFUSE("/dev/fuse"); err != nil {
		return err
	}
	noteDataDir(mf.datadir, mf.mountpoint, mf.readOnly, lg)
	mets := metrics.New(nil)
	var st partlog.Store
	stopCleaner, fsName := func() {}, mf.datadir
	if mf.kafka.brokers != "" {
		ks, err := openKafka(mf, lg)
		if err != nil {
			return fmt.Errorf("connect to %s: %w", mf.kafka.brokers, err)
		}
		st, fsName = ks, "kafka://"+mf.kafka.brokers
	} else {
		// Opening and closing report the partitions done when they take
		// over a second, as log lines.
		progw := lg.WriterLevel(logrus.InfoLevel)
		defer progw.Close()
		ls, err := openStore(mf, defaults, mets, lg, progw)
		if err != nil {
			return fmt.Errorf("open %s: %w", mf.datadir, err)
		}
		st = ls
		if cleanerOn && !mf.readOnly {
			cleaner.OnCleaned = mets.Cleaned
			cleaner.OnFailed = func(topic string, partition int, _ error) { mets.BackgroundFailed("clean", topic, partition) }
			cleaner.Logger = lg.WithField("component", "cleaner")
			cleaner.Logger.WithFields(logrus.Fields{"threads": max(cleaner.Threads, 1), "backoff": cleaner.Backoff}).
				Info("log cleaner started; each cleaning is logged")
			stopCleaner = compact.Start(ls, cleaner)
		}
	}
	mets.AddStore(st)
	if mf.metricsAddr != "" {
		ln, err := net.Listen("tcp", mf.metricsAddr)
		if err != nil {
			stopCleaner()
			_ = st.Close()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer serveMetrics(ln, mets, lg)()
	}
	codecs, err := mf.schemas.codecs(st, mf.kafka.timeout, mets, lg)
	if err != nil {
		stopCleaner()
		_ = st.Close()
		return fmt.Errorf("--schema-registry: %w", err)
	}
	fsys := pfs.New(pfs.Options{Store: st, Logger: lg, Metrics: mets, Schemas: codecs})
	srv, err := fsys.Mount(mf.mountpoint, pfs.MountOptions{AllowOther: mf.allowOther, Debug: mf.debugFUSE, FsName: fsName, NoPageCache: mf.noPageCache})
	if err != nil {
		stopCleaner()
		_ = st.Close()
		return fmt.Errorf("mount on %s: %w", mf.mountpoint, describeMountError(err))
	}
	lg.WithFields(logrus.Fields{"datadir": fsName, "mountpoint": mf.mountpoint, "read_only": mf.readOnly}).Info("mounted")
	conn, served, stuck := fuseConn(mf.mountpoint), make(chan struct{}), make(chan struct{})
	go func() { srv.Wait(); close(served) }()
	go func() {
		for sig := range stop {
			lg.WithField("signal", sig.String()).Info("unmounting")
			if !stopServing(srv, mf.mountpoint, conn, served, lg) {
				close(stuck)
				return
			}
		}
	}()
	select {
	case <-served:
		lg.Info("unmounted; closing the store")
	case <-stuck:
		lg.Warn("closing the store with files still open; the kernel ends their connection when this process exits")
	}
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

// openStore opens the data directory, its partitions in the background
// (one asked for first opens first), reporting to logw the progress of an
// unclean open's recovery (bytes re-validated, rate) and the partitions
// opened, synced and closed when that takes over a second, and counting
// the bytes recovery cuts in the metrics.
func openStore(mf *mountFlags, defaults map[string]string, mets *metrics.Metrics, lg *logrus.Entry, logw io.Writer) (*logstore.Store, error) {
	prog := progress.Start(logw, "recovery", 0, progress.Options{})
	budget := vfs.OpenFileBudget()
	lg.WithField("open_file_budget", budget).Debug("segment files beyond the budget are closed and reopened on demand")
	retention, defaults, err := retentionCheckInterval(defaults)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	// The store works with absolute paths: a relative one would cost a
	// getcwd (two stats) at every file it opens.
	dir := mf.datadir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	st, err := logstore.Open(dir, logstore.Options{Logger: lg, Defaults: defaults, ReadOnly: mf.readOnly, OpenInBackground: true,
		BatchBytes: mf.batchBytes, Progress: logw, FS: vfs.NewBudgetFS(vfs.Beneath(dir), budget), RetentionInterval: retention,
		OnBackgroundError: func(task, topic string, partition int, _ error) {
			mets.BackgroundFailed(task, topic, partition)
		},
		OnRecovered: func(topic string, partition int, scanned, cut int64) {
			prog.Add(scanned + cut)
			mets.Truncated(topic, partition, cut)
		}})
	if err != nil {
		prog.Stop()
		return nil, err
	}
	go func() {
		st.WaitOpened()
		if prog.Bytes() > 0 {
			prog.Done("done")
		} else {
			prog.Stop()
		}
	}()
	return st, nil
}

// retentionCheckInterval takes Kafka's broker key
// log.retention.check.interval.ms out of the --config topic defaults (0:
// logstore's default).
func retentionCheckInterval(defaults map[string]string) (time.Duration, map[string]string, error) {
	const key = "log.retention.check.interval.ms"
	v, ok := defaults[key]
	if !ok {
		return 0, defaults, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return 0, nil, fmt.Errorf("%s=%s: want a positive number of milliseconds", key, v)
	}
	rest := maps.Clone(defaults)
	delete(rest, key)
	return time.Duration(ms) * time.Millisecond, rest, nil
}

// serveMetrics serves mets over HTTP at /metrics on ln until stop is called.
func serveMetrics(ln net.Listener, mets *metrics.Metrics, lg *logrus.Entry) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", mets.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			lg.WithError(err).Error("metrics server stopped")
		}
	}()
	lg.WithField("addr", ln.Addr().String()).Info("serving metrics over HTTP at /metrics")
	return func() { _ = srv.Close() }
}
