package e2e

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/jsonl"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// rendered is log and log.jsonl of a partition as the log API gives its
// records, extended on demand: the stream has no gap, so a rendering
// taken later holds an earlier one as its prefix.
type rendered struct {
	mu    sync.Mutex
	l     partlog.Log
	next  int64
	plain []byte
	jsonl []byte
}

// upTo returns the rendering of name (log or log.jsonl), read again from
// the log if it is shorter than n.
func (r *rendered) upTo(name string, n int) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &r.plain
	if name == "log.jsonl" {
		b = &r.jsonl
	}
	if len(*b) >= n {
		return *b, nil
	}
	next, err := partlog.ReadFrom(r.l, r.next, func(rec *record.Record) {
		if rec.Value != nil {
			r.plain = append(append(r.plain, rec.Value...), '\n')
		}
		r.jsonl = append(jsonl.Append(r.jsonl, rec), '\n')
	})
	r.next = next
	if err != nil {
		return nil, err
	}
	return *b, nil
}

// stress runs writers and cached readers of one partition together; every
// byte a reader gets must be the log API's at that position.
type stress struct {
	t    *testing.T
	e    *env
	ref  *rendered
	done atomic.Bool // stop, set by finish
	// removed counts reads failed with EIO: a cached open whose records
	// retention removed
	removed atomic.Int64
	wg      sync.WaitGroup

	mu    sync.Mutex
	errs  []string
	reads int // reads checked
	bytes int64
}

func newStress(t *testing.T, e *env) *stress {
	l, err := e.st.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	return &stress{t: t, e: e, ref: &rendered{l: l}}
}

// fail records a failure; the first few are reported.
func (s *stress) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) < 10 {
		s.errs = append(s.errs, fmt.Sprintf(format, args...))
	}
}

func (s *stress) failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.errs) > 0
}

// check compares what a reader (who) got at pos of name with the log API.
func (s *stress) check(who, name string, pos int64, got []byte) {
	if len(got) == 0 {
		return
	}
	want, err := s.ref.upTo(name, int(pos)+len(got))
	if err != nil {
		s.fail("%s: rendering %s: %v", who, name, err)
		return
	}
	s.counted(len(got))
	end := int(pos) + len(got)
	if z := bytes.IndexByte(got, 0); z >= 0 || end > len(want) || !bytes.Equal(got, want[pos:end]) {
		i := 0
		for i < len(got) && int(pos)+i < len(want) && got[i] == want[int(pos)+i] {
			i++
		}
		s.fail("%s: %s at %d: %d bytes, first difference at %d (NUL at %d; API has %d bytes): got %.40q want %.40q",
			who, name, pos, len(got), pos+int64(i), z, len(want), got[i:], want[min(int(pos)+i, len(want)):])
	}
}

// counted counts a read of n bytes checked.
func (s *stress) counted(n int) {
	s.mu.Lock()
	s.reads++
	s.bytes += int64(n)
	s.mu.Unlock()
}

// run calls fn in a goroutine of its own until finish; an error fails
// the test.
func (s *stress) run(who string, fn func(rng *rand.Rand) error) {
	s.wg.Add(1)
	seed := rand.Int63()
	go func() {
		defer s.wg.Done()
		rng := rand.New(rand.NewSource(seed))
		for !s.done.Load() && !s.failed() {
			if err := fn(rng); err != nil {
				s.fail("%s (seed %d): %v", who, seed, err)
				return
			}
		}
	}()
}

// finish stops everything after d, then reports the failures.
func (s *stress) finish(d time.Duration) {
	time.Sleep(d)
	s.done.Store(true)
	s.wg.Wait()
	s.t.Logf("%d reads checked, %d bytes; %d failed as removed", s.reads, s.bytes, s.removed.Load())
	for _, e := range s.errs {
		s.t.Error(e)
	}
}

// line is a plain line of a writer: its id, a sequence number and padding
// of random length.
func line(rng *rand.Rand, who string, seq int) string {
	return fmt.Sprintf("%s-%d-%s\n", who, seq, strings.Repeat("x", rng.Intn(200)))
}

// mountWriter appends through the mount to name: batches of lines, split
// across writes at random points when split is set (the daemon holds the
// partial line), now and then more than one FUSE request's worth.
func (s *stress) mountWriter(who, name string, split bool, mk func(rng *rand.Rand, seq int) string) {
	f, err := os.OpenFile(s.e.Path("t/0/"+name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { f.Close() })
	seq := 0
	s.run(who, func(rng *rand.Rand) error {
		var b strings.Builder
		n := 1 + rng.Intn(10)
		if rng.Intn(200) == 0 {
			n = 20000 // > 1 MiB: the kernel splits it mid-line
		}
		for i := 0; i < n; i++ {
			b.WriteString(mk(rng, seq))
			seq++
		}
		data := []byte(b.String())
		for len(data) > 0 {
			k := len(data)
			if split && rng.Intn(2) == 0 {
				k = 1 + rng.Intn(len(data))
			}
			if _, err := f.Write(data[:k]); err != nil {
				return err
			}
			data = data[k:]
		}
		time.Sleep(time.Duration(rng.Intn(500)) * time.Microsecond)
		return nil
	})
}

// apiWriter appends through the log API, unseen by the kernel.
func (s *stress) apiWriter(who string) {
	seq := 0
	s.run(who, func(rng *rand.Rand) error {
		recs := make([]record.Record, 1+rng.Intn(10))
		for i := range recs {
			recs[i].Value = []byte(strings.TrimSuffix(line(rng, who, seq), "\n"))
			seq++
		}
		_, err := s.ref.l.Append(recs)
		time.Sleep(time.Duration(rng.Intn(500)) * time.Microsecond)
		return err
	})
}

// preader reads at random positions around the end it last saw, with or
// without a stat first, on one open or a new one.
func (s *stress) preader(who, name string) {
	var f *os.File
	s.t.Cleanup(func() {
		if f != nil {
			f.Close()
		}
	})
	var size int64
	s.run(who, func(rng *rand.Rand) error {
		if f == nil || rng.Intn(50) == 0 {
			if f != nil {
				f.Close()
			}
			var err error
			if f, err = os.Open(s.e.Path("t/0/" + name)); err != nil {
				return err
			}
		}
		if rng.Intn(2) == 0 {
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			size = fi.Size()
		}
		pos := max(0, size-int64(rng.Intn(64<<10))+int64(rng.Intn(8<<10)))
		buf := make([]byte, 1+rng.Intn(16<<10))
		n, err := f.ReadAt(buf, pos)
		if err != nil && err != io.EOF {
			return err
		}
		s.check(who, name, pos, buf[:n])
		size = max(size, pos+int64(n))
		return nil
	})
}

// follower reads on to the end again and again, as tail -f does, a stat
// between reads or not.
func (s *stress) follower(who, name string) {
	f, err := os.Open(s.e.Path("t/0/" + name))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { f.Close() })
	var pos int64
	buf := make([]byte, 1<<20)
	s.run(who, func(rng *rand.Rand) error {
		if rng.Intn(2) == 0 {
			if _, err := f.Stat(); err != nil {
				return err
			}
		}
		n, err := f.ReadAt(buf[:1+rng.Intn(len(buf))], pos)
		if err != nil && err != io.EOF {
			return err
		}
		s.check(who, name, pos, buf[:n])
		pos += int64(n)
		if n == 0 {
			time.Sleep(time.Duration(rng.Intn(300)) * time.Microsecond)
		}
		return nil
	})
}

// catter reads the whole file with a new open each time.
func (s *stress) catter(who, name string) {
	s.run(who, func(rng *rand.Rand) error {
		b, err := os.ReadFile(s.e.Path("t/0/" + name))
		if err != nil {
			return err
		}
		s.check(who, name, 0, b)
		return nil
	})
}

// jsonLine is a log.jsonl line whose rendering is shorter than it is (an
// escaped value, base64 of UTF-8, spaces), so the kernel's size after
// the write runs ahead of the file's.
func jsonLine(rng *rand.Rand, who string, seq int) string {
	switch rng.Intn(3) {
	case 0:
		return fmt.Sprintf(`{"value":"%s-%d-\u0041\u0042"}`+"\n", who, seq)
	case 1:
		v := fmt.Sprintf("%s-%d", who, seq)
		return fmt.Sprintf(`{"offset":123456789012,"value_b64":%q}`+"\n", base64.StdEncoding.EncodeToString([]byte(v)))
	}
	return fmt.Sprintf(`{ "value" : "%s-%d" %s}`+"\n", who, seq, strings.Repeat(" ", rng.Intn(300)))
}

// stressFor is how long each stress runs: PARTFS_STRESS_SECONDS; unset,
// the stress is skipped. Under it a reader through the page cache still,
// rarely, reads zeros at the end of a page below the size (a random-
// position reader: 2 runs in 10 of 2x30 s of TestCachedReadersUnderAppends
// on 2 loaded cores), a race not found yet; the deterministic tests of
// cache_test.go run in CI instead.
func stressFor(t *testing.T) time.Duration {
	v := os.Getenv("PARTFS_STRESS_SECONDS")
	if v == "" {
		t.Skip("PARTFS_STRESS_SECONDS unset")
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
		t.Fatalf("PARTFS_STRESS_SECONDS=%q", v)
	}
	return time.Duration(n) * time.Second
}

// TestCachedReadersUnderAppends: readers of log and log.jsonl — at random
// positions behind and past the kernel's size, following the end with and
// without a stat, re-reading whole, several at once — while writers append
// whole lines through the mount and records through the log API, on an
// uncompressed and an lz4 topic: every byte read is the log API's at its
// position. PARTFS_STRESS_SECONDS sets how long each topic runs;
// PARTFS_STRESS_AHEAD=1 adds writers that leave the kernel's size past the
// file's end (lines split across writes, log.jsonl lines rendered shorter
// than written): a reader already reading through the cache when they
// start may still read zeros (viewCache.sizeAhead).
func TestCachedReadersUnderAppends(t *testing.T) {
	d := stressFor(t)
	for _, codec := range []string{"none", "lz4"} {
		t.Run(codec, func(t *testing.T) {
			e := newEnv(t, mountOpt{})
			e.Sh("mkdir t && printf 'compression.type=" + codec + "\\nsegment.bytes=262144\\n' >> t/config")
			e.Sh("seq 1 1000 >> t/0/log")
			s := newStress(t, e)
			for _, name := range []string{"log", "log.jsonl"} {
				s.preader("pread "+name, name)
				s.follower("follow "+name, name)
				s.catter("cat "+name, name)
			}
			whole := func(who string) func(*rand.Rand, int) string {
				return func(rng *rand.Rand, seq int) string { return line(rng, who, seq) }
			}
			s.mountWriter("whole", "log", false, whole("whole"))
			s.mountWriter("whole2", "log", false, whole("whole2"))
			s.apiWriter("api")
			if os.Getenv("PARTFS_STRESS_AHEAD") != "" {
				s.mountWriter("split", "log", true, whole("split"))
				s.mountWriter("json", "log.jsonl", true, func(rng *rand.Rand, seq int) string { return jsonLine(rng, "json", seq) })
			}
			s.finish(d)
		})
	}
}

// lineChecker checks what one sequential reader of a file got, line by
// line: each line whole, of a writer (line), and each writer's lines in
// increasing order without repeats, across retention's gaps.
type lineChecker struct {
	name    string
	partial []byte
	last    map[string]int
}

// add takes the next bytes the reader got and returns the first wrong
// line, if any.
func (c *lineChecker) add(got []byte) error {
	if c.last == nil {
		c.last = map[string]int{}
	}
	if z := bytes.IndexByte(got, 0); z >= 0 {
		return fmt.Errorf("NUL at byte %d of %d read", z, len(got))
	}
	c.partial = append(c.partial, got...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			return nil
		}
		l := string(c.partial[:i])
		c.partial = c.partial[i+1:]
		if c.name == "log.jsonl" {
			v, ok := jsonValue(l)
			if !ok {
				return fmt.Errorf("line %.60q: not a record", l)
			}
			l = v
		}
		var who string
		var seq int
		if n, err := fmt.Sscanf(strings.ReplaceAll(l, "-", " "), "%s %d", &who, &seq); n != 2 || err != nil {
			return fmt.Errorf("line %.60q: not a writer's", l)
		}
		if last, ok := c.last[who]; ok && seq <= last {
			return fmt.Errorf("line %.60q after %s's %d", l, who, last)
		}
		c.last[who] = seq
	}
}

// jsonValue is the value of a log.jsonl line.
func jsonValue(l string) (string, bool) {
	_, rest, ok := strings.Cut(l, `"value":"`)
	v, _, ok2 := strings.Cut(rest, `"`)
	return v, ok && ok2
}

// TestReadersAcrossRetention: readers of log and log.jsonl — following
// the end, re-reading from the start in one open and whole — while records are
// appended and retention deletes the oldest segments again and again:
// no reader gets a NUL, and a reader from the start gets whole lines,
// each writer's in order and none twice (docs/spec.md §3: a sequential reader
// continues after a removed record with the next surviving one). A reader
// through the page cache whose records were removed before it read them
// gets EIO instead (viewHandle.Read) and opens again.
func TestReadersAcrossRetention(t *testing.T) {
	d := stressFor(t)
	e := newEnv(t, mountOpt{defaults: map[string]string{"file.delete.delay.ms": "0"}})
	e.Sh("mkdir t && printf 'segment.bytes=16384\\nretention.bytes=65536\\n' >> t/config")
	e.Sh("seq 1 1000 | sed s/^/seed-/ >> t/0/log")
	s := newStress(t, e)
	s.apiWriter("api")
	s.mountWriter("whole", "log", false, func(rng *rand.Rand, seq int) string { return line(rng, "whole", seq) })
	s.run("retention", func(rng *rand.Rand) error {
		time.Sleep(time.Duration(rng.Intn(20)) * time.Millisecond)
		return e.st.RunMaintenance(true, false)
	})
	for _, name := range []string{"log", "log.jsonl"} {
		s.seqReader("follow "+name, name, true)
		s.seqReader("cat "+name, name, false)
		s.run("whole "+name, func(rng *rand.Rand) error {
			b, err := os.ReadFile(e.Path("t/0/" + name))
			if err != nil {
				return err
			}
			if z := bytes.IndexByte(b, 0); z >= 0 {
				return fmt.Errorf("NUL at %d of %d", z, len(b))
			}
			s.counted(len(b))
			return nil
		})
	}
	s.finish(d)
	if e.Sh("grep log_start_offset t/0/stat") == "log_start_offset: 0\n" {
		t.Error("retention removed nothing")
	}
}

// seqReader reads name from the start in one open, to the end and on
// (follow) or once per open, checking its lines.
func (s *stress) seqReader(who, name string, follow bool) {
	buf := make([]byte, 64<<10)
	s.run(who, func(rng *rand.Rand) error {
		f, err := os.Open(s.e.Path("t/0/" + name))
		if err != nil {
			return err
		}
		defer f.Close()
		c := &lineChecker{name: name}
		for !s.done.Load() {
			n, err := f.Read(buf[:1+rng.Intn(len(buf))])
			if errors.Is(err, syscall.EIO) {
				// a cached open whose records were removed: reopen
				s.removed.Add(1)
				return nil
			}
			if err := c.add(buf[:n]); err != nil {
				return err
			}
			s.counted(n)
			if err == io.EOF {
				if !follow {
					return nil
				}
				if _, err := f.Stat(); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
			} else if err != nil {
				return err
			}
		}
		return nil
	})
}
