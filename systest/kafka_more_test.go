package systest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/partfs/partfs/internal/testutil"
)

// TestKafkaTimeMatchesKcat: @time/T starts at the offset kcat -o s@T
// starts at, for times before, between, on and after the records';
// ranges hold what lies between; @offset/N starts at N.
func TestKafkaTimeMatchesKcat(t *testing.T) {
	_, addr, d := kcatMount(t)
	var b strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, `{"value":"r%d","timestamp":%d}`+"\n", i, 1764410400000+int64(i/2)*10)
	}
	if err := os.Mkdir(d.path("t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(d.path("t", "0", "log.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, ts := range []int64{0, 1764410400000, 1764410400005, 1764410400010, 1764410401234, 1764410402490, 1764410402491, 1864410400000} {
		want := strings.TrimSpace(kcat(t, addr, "", "-C", "-t", "t", "-p", "0", "-o", fmt.Sprint("s@", ts), "-c", "1", "-e", "-q", "-f", "%o\n"))
		got := d.sh(fmt.Sprintf("head -1 t/0/@time/%d.jsonl | sed 's/^{\"offset\":\\([0-9]*\\).*/\\1/'", ts))
		if strings.TrimSpace(got) != want {
			t.Errorf("@time/%d starts at %q, kcat -o s@%d at %q", ts, got, ts, want)
		}
	}
	if got := d.sh("wc -l < t/0/@time/1764410400010..1764410400050"); strings.TrimSpace(got) != "8" {
		t.Errorf("@time range holds %s records, want 8", got)
	}
	if got := d.sh("head -1 t/0/@offset/123; wc -l < t/0/@offset/100..200; cat t/0/@time/max; head -1 t/0/@time/2025-11-29T10:00:00.005Z"); got != "r123\n100\nr498\nr499\nr2\n" {
		t.Errorf("offset views: %q", got)
	}
}

// TestKafkaPositions: a partition of several tiles read through the
// mount: cat, tail -c, dd skip= reach the same bytes; st_size and the
// bytes at a position hold across a remount with the same cache
// directory; tail -f on log, log.jsonl, @offset/N and @time/latest shows
// what kcat produces.
func TestKafkaPositions(t *testing.T) {
	testutil.Kcat(t)
	_, addr := kafkaCluster(t)
	var input strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&input, "line %05d\n", i)
	}
	// records produced by another client: the mount has rendered none
	d := kafkaMount(t, addr, "")
	d.sh("mkdir t")
	kcat(t, addr, input.String(), "-P", "-t", "t", "-p", "0")
	d.stop()
	cache := t.TempDir()
	d = kafkaMount(t, addr, cache)
	size, err := os.Stat(d.path("t", "0", "log"))
	if err != nil {
		t.Fatal(err)
	}
	// Three tiles found unread are placed each right after the one
	// before (a mount reads up to 16 to place the next ones).
	if got := d.sh("tail -c 22 t/0/log"); got != "line 09998\nline 09999\n" {
		t.Fatalf("tail -c: %q", got)
	}
	if got := d.sh("cat t/0/log"); got != input.String() {
		t.Fatalf("cat log: %d bytes, want %d", len(got), input.Len())
	}
	pos := size.Size() - 11*1000 // inside the last tile
	dd := fmt.Sprintf("dd if=t/0/log bs=1 skip=%d count=22 status=none", pos)
	at := d.sh(dd)
	if len(at) != 22 || !strings.Contains(input.String(), at) {
		t.Fatalf("%s: %q, not 22 bytes of the records", dd, at)
	}
	d.stop()
	d = kafkaMount(t, addr, cache)
	again, err := os.Stat(d.path("t", "0", "log"))
	if err != nil || again.Size() != size.Size() {
		t.Fatalf("st_size %d after a remount with the same cache, %d before (%v)", again.Size(), size.Size(), err)
	}
	if got := d.sh(dd); got != at {
		t.Fatalf("after a remount, position %d holds %q, before %q", pos, got, at)
	}
	// retention (DeleteRecords up to offset 5000) moves nothing that is left
	deleteRecords(t, addr, "t", 5000)
	time.Sleep(100 * time.Millisecond) // the mount asks for offsets again after 50 ms
	if got := d.sh(dd); got != at {
		t.Fatalf("after DeleteRecords, position %d holds %q, before %q", pos, got, at)
	}
	if got := d.sh("head -1 t/0/log; tail -c 11 t/0/log; head -1 t/0/@offset/earliest"); got != "line 05000\nline 09999\nline 05000\n" {
		t.Fatalf("after DeleteRecords: %q", got)
	}
	if st, err := os.Stat(d.path("t", "0", "log")); err != nil || st.Size() != size.Size() {
		t.Fatalf("st_size %d after DeleteRecords, %d before (%v)", st.Size(), size.Size(), err)
	}
	// tail -f on each view follows what another client produces
	end := strings.TrimSpace(d.sh("sed -n 's/^log_end_offset: //p' t/0/stat"))
	views := map[string]string{
		"log":                "followed\n",
		"log.jsonl":          `"value":"followed"`,
		"@offset/" + end:     "followed\n",
		"@time/latest.jsonl": `"value":"followed"`,
	}
	outs := map[string]string{}
	var cmds []*exec.Cmd
	for view := range views {
		out, from := filepath.Join(t.TempDir(), "out"), "+1" // a window starts empty
		if !strings.HasPrefix(view, "@") {
			from = "0"
		}
		cmd := exec.Command("sh", "-c", "exec tail -n "+from+" -s 0.2 -f t/0/"+view+" > "+out)
		cmd.Dir = d.mnt
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		outs[view], cmds = out, append(cmds, cmd)
	}
	time.Sleep(500 * time.Millisecond)
	kcat(t, addr, "followed\n", "-P", "-t", "t", "-p", "0")
	for view, want := range views {
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, _ := os.ReadFile(outs[view])
			if strings.Contains(string(b), want) && strings.Count(string(b), "\n") == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tail -f %s shows %q 5 s after kcat produced", view, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, cmd := range cmds {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	d.stop()
}

// TestKafkaErrors: unknown topics and partitions are ENOENT, a bad config
// line EINVAL with nothing changed, a good one is the cluster's, a record
// over max.message.bytes EFBIG, mkdir of partition n adds it.
func TestKafkaErrors(t *testing.T) {
	_, addr := kafkaCluster(t)
	d := kafkaMount(t, addr, "")
	d.sh("mkdir t && mkdir t/1 && echo a >> t/1/log && test \"$(cat t/1/log)\" = a")
	for _, c := range []struct {
		script string
		errno  string
	}{
		{"cat nosuch/0/log", "No such file or directory"},
		{"cat t/7/log", "No such file or directory"},
		{"echo no.such.property=1 >> t/config", "Invalid argument"},
		{"echo retention.ms=abc >> t/config", "Invalid argument"},
		{"mkdir t/5", "Invalid argument"},
		{"mkdir 'bad name'", "Invalid argument"},
	} {
		out, err := testutil.Sh(d.mnt, "("+c.script+") 2>&1", 30*time.Second)
		if err == nil || !strings.Contains(out, c.errno) {
			t.Errorf("%s: %v %q, want %s", c.script, err, out, c.errno)
		}
	}
	d.sh("echo retention.ms=3600000 >> t/config && grep -qx retention.ms=3600000 t/config && ! grep -q no.such t/config")
	d.sh("echo max.message.bytes=2000 >> t/config")
	big := strings.Repeat("x", 3000)
	out, err := testutil.Sh(d.mnt, "(echo "+big+" >> t/0/log) 2>&1", 30*time.Second)
	if err == nil || !strings.Contains(out, "File too large") {
		t.Errorf("a 3000-byte record with max.message.bytes=2000: %v %q", err, tail(out, 200))
	}
	if got := d.sh("cat t/0/log | wc -c"); strings.TrimSpace(got) != "0" {
		t.Errorf("the refused record left %s bytes", got)
	}
	d.stop()
	ro := kafkaMount(t, addr, "", "--read-only")
	for _, script := range []string{"echo x >> t/0/log", "mkdir u", "mkdir t/2", "echo retention.ms=1 >> t/config"} {
		out, err := testutil.Sh(ro.mnt, "("+script+") 2>&1", 30*time.Second)
		if err == nil || !strings.Contains(out, "Read-only file system") {
			t.Errorf("%s on a --read-only mount: %v %q, want EROFS", script, err, out)
		}
	}
	if got := ro.sh("cat t/1/log"); got != "a\n" {
		t.Errorf("reading a --read-only mount: %q", got)
	}
	ro.stop()
}

// TestKafkaSCRAM: a SCRAM-SHA-256 mount with the password from the
// environment writes what kcat, authenticated the same way, reads; a
// principal the cluster's ACLs do not let write gets EACCES; a wrong
// password fails the mount with a message.
func TestKafkaSCRAM(t *testing.T) {
	_, addr := kafkaCluster(t, kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("SCRAM-SHA-256", "admin", "s3cret"),
		kfake.User("SCRAM-SHA-256", "reader", "r3ad",
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationRead, Allow: true},
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribe, Allow: true},
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribeConfigs, Allow: true}))
	t.Setenv("PARTFS_KAFKA_PASSWORD", "s3cret")
	d := kafkaMount(t, addr, "", "--kafka-sasl", "scram-sha-256", "--kafka-user", "admin")
	d.sh("mkdir t && printf 'a\\nb\\n' >> t/0/log")
	// Debian's kcat (librdkafka 2.0) cannot authenticate to kfake ("SASL
	// Handshake not supported by broker"), so franz-go's consumer, with
	// the same SCRAM credentials, checks what the mount wrote.
	if got := consume(t, addr, "t", kgo.SASL(scram.Auth{User: "admin", Pass: "s3cret"}.AsSha256Mechanism())); got != "a\nb\n" {
		t.Errorf("a SCRAM-authenticated consumer reads %q", got)
	}
	d.stop()
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("r3ad\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PARTFS_KAFKA_PASSWORD", "")
	r := kafkaMount(t, addr, "", "--kafka-sasl", "scram-sha-256", "--kafka-user", "reader", "--kafka-password-file", pw)
	if got := r.sh("cat t/0/log"); got != "a\nb\n" {
		t.Errorf("the reader reads %q", got)
	}
	out, err := testutil.Sh(r.mnt, "(echo c >> t/0/log) 2>&1", 30*time.Second)
	if err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("a write the ACLs refuse: %v %q", err, out)
	}
	r.stop()
	t.Setenv("PARTFS_KAFKA_PASSWORD", "wrong")
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	out2, code := runPartfs(t, "mount", "--kafka", addr, "--kafka-sasl", "scram-sha-256", "--kafka-user", "admin", "--kafka-timeout", "5s", mnt)
	if code == 0 || !strings.Contains(out2, "SASL") {
		t.Errorf("a wrong password: exit %d\n%s", code, tail(out2, 500))
	}
}

// TestKafkaTLSPlain: a mount over TLS (--kafka-ca) with SASL PLAIN, the
// password from --kafka-password-file, writes and reads a topic; without
// --kafka-ca the brokers' certificate is refused and the mount fails.
func TestKafkaTLSPlain(t *testing.T) {
	tlsOpt, ca := testutil.KafkaTLS(t)
	_, addr := kafkaCluster(t, tlsOpt, kfake.EnableSASL(), kfake.Superuser("PLAIN", "me", "pl41n"))
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("pl41n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := kafkaMount(t, addr, "", "--kafka-ca", ca, "--kafka-sasl", "plain", "--kafka-user", "me", "--kafka-password-file", pw)
	if got := d.sh("mkdir t && printf 'x\\ny\\n' >> t/0/log && cat t/0/log"); got != "x\ny\n" {
		t.Errorf("over TLS the mount reads back %q", got)
	}
	d.stop()
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := runPartfs(t, "mount", "--kafka", addr, "--kafka-tls", "--kafka-sasl", "plain", "--kafka-user", "me",
		"--kafka-password-file", pw, "--kafka-timeout", "3s", mnt)
	if code == 0 {
		t.Errorf("a broker certificate no trusted CA signed: exit 0\n%s", tail(out, 500))
	}
}

// TestKafkaLeaderMovesAndFaults: while lines are appended one write()
// at a time, the partition's leader moves between three brokers and
// produce requests fail (NOT_LEADER, and REQUEST_TIMED_OUT after the
// append, which makes the same batch go again): kcat reads every line
// once, in order. The leader moves at most once per write that landed, so
// that on a loaded machine a write's retries are not outrun by moves
// forever (which --kafka-timeout would then rightly end with ETIMEDOUT).
func TestKafkaLeaderMovesAndFaults(t *testing.T) {
	testutil.Kcat(t)
	c, addr := kafkaCluster(t, kfake.NumBrokers(3))
	d := kafkaMount(t, addr, "", "--log-level", "debug")
	d.sh("mkdir t")
	const n = 300
	done := make(chan error, 1)
	go func() {
		_, err := testutil.Sh(d.mnt, fmt.Sprintf("for i in $(seq 1 %d); do echo $i >> t/0/log || exit 1; done", n), 120*time.Second)
		done <- err
	}()
	var moves, faults int
	var last *kfake.FaultHandle
	moved := int64(-1) // the high watermark at the last move
	for loop := true; loop; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writes: %v\n%s", err, tail(d.log.String(), 3000))
			}
			loop = false
		case <-time.After(40 * time.Millisecond):
			hw := c.PartitionInfo("t", 0).HighWatermark
			if hw == moved {
				continue // no write landed since the last move: let its retry land first
			}
			moved = hw
			moves++
			if err := c.MoveTopicPartition("t", 0, int32(moves%3)); err != nil {
				t.Fatal(err)
			}
			if moves%3 != 0 || (last != nil && last.Hits() == 0) {
				continue // one fault at a time: each is met by a retry
			}
			faults++
			e := kerr.NotLeaderForPartition
			if faults%2 == 0 {
				e = kerr.RequestTimedOut // answered after the append happened
			}
			last = c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: e, Count: 1})
		}
	}
	if moves < 3 {
		t.Fatalf("%d leader moves and %d faults during the writes: too few to test them", moves, faults)
	}
	var want strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if got := kcat(t, addr, "", "-C", "-t", "t", "-p", "0", "-e", "-q"); got != want.String() {
		t.Fatalf("after %d leader moves and %d faults kcat reads %d lines:\n%s", moves, faults, strings.Count(got, "\n"), tail(got, 300))
	}
	if got := d.sh("cat t/0/log"); got != want.String() {
		t.Fatalf("the mount reads %d lines", strings.Count(got, "\n"))
	}
	t.Logf("%d leader moves, %d injected produce failures", moves, faults)
	d.stop()
}

// TestKafkaClusterStopsAnswering: a cluster that stops answering fails
// reads, stats, writes and the listing of the root within --kafka-timeout
// with ETIMEDOUT and a log line naming broker, topic and partition; once
// it answers again the same mount works; unmount exits 0.
func TestKafkaClusterStopsAnswering(t *testing.T) {
	c, addr := kafkaCluster(t)
	d := kafkaMount(t, addr, "", "--kafka-timeout", "2s")
	d.sh("mkdir t && echo before >> t/0/log")
	var down atomic.Bool
	c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		// A stopped cluster, as a paused broker process is: no request is
		// answered while down, and each is answered once it is up again.
		// (Leaving a request unanswered for good would mute its connection
		// for ever in kfake, which no broker does once it runs again.)
		for down.Load() {
			time.Sleep(10 * time.Millisecond)
		}
		return nil, nil, false
	})
	down.Store(true)
	for _, script := range []string{"cat t/0/log", "echo during >> t/0/log", "cat t/0/@offset/0", "ls"} {
		start := time.Now()
		out, err := testutil.Sh(d.mnt, "("+script+") 2>&1", 30*time.Second)
		took := time.Since(start)
		if err == nil || !strings.Contains(out, "Connection timed out") {
			t.Errorf("%s while the cluster is silent: %v %q, want ETIMEDOUT", script, err, out)
		}
		if took > 3500*time.Millisecond {
			t.Errorf("%s failed after %v, timeout 2s", script, took)
		}
	}
	if !d.waitLog(5*time.Second, "did not answer", "broker=", "topic=t", "partition=0") {
		t.Errorf("no log line naming broker, topic and partition:\n%s", tail(d.log.String(), 2000))
	}
	down.Store(false)
	out, err := d.shOnceUp("echo after >> t/0/log && cat t/0/log")
	if err != nil || !strings.HasPrefix(out, "before\n") || !strings.HasSuffix(out, "after\n") {
		t.Fatalf("after the cluster answers again: %v %q", err, out)
	}
	d.stop()
}

// TestKafkaMountHelperAndScript: `mount -t fuse.partfs kafka://HOST:PORT
// MNT` (the helper as mount(8) runs it) and `./mount.sh --kafka
// HOST:PORT MNT` serve the cluster; umount and mount.sh -u stop the
// daemon cleanly.
func TestKafkaMountHelperAndScript(t *testing.T) {
	testutil.NeedFUSE(t)
	_, addr := kafkaCluster(t)
	dir := t.TempDir()
	mnt, logf := filepath.Join(dir, "mnt"), filepath.Join(dir, "partfs.log")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	helper, err := filepath.Abs("../scripts/mount.fuse.partfs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helper, "kafka://"+addr, mnt, "-o", "rw,kafka_timeout=5s,cache_dir="+filepath.Join(dir, "cache"))
	cmd.Env = append(os.Environ(), "PARTFS="+partfsBin, "PARTFS_LOG="+logf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mount helper: %v\n%s", err, out)
	}
	defer detach(t, mnt)
	if out, err := testutil.Sh(mnt, "mkdir t && echo hello >> t/0/log && cat t/0/log", 30*time.Second); err != nil || out != "hello\n" {
		t.Fatalf("through the helper's mount: %v %q", err, out)
	}
	run(t, "umount", mnt)
	waitFile(t, logf, "clean shutdown")
	script, err := filepath.Abs("../mount.sh")
	if err != nil {
		t.Fatal(err)
	}
	mnt2 := filepath.Join(dir, "mnt2")
	sc := exec.Command(script, "--kafka", addr, mnt2)
	sc.Env = append(os.Environ(), "PARTFS_FLAGS=--cache-dir "+filepath.Join(dir, "cache"), "PARTFS_LOG="+logf)
	if out, err := sc.CombinedOutput(); err != nil {
		t.Fatalf("mount.sh --kafka: %v\n%s", err, out)
	}
	defer detach(t, mnt2)
	if out, err := testutil.Sh(mnt2, "cat t/0/log", 30*time.Second); err != nil || out != "hello\n" {
		t.Fatalf("through mount.sh's mount: %v %q", err, out)
	}
	run(t, script, "-u", mnt2)
}

// consume reads partition 0 of topic from the start to its end with
// franz-go's consumer, one line per record value.
func consume(t *testing.T, addr, topic string, opts ...kgo.Opt) string {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(addr, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	end, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := end.Lookup(topic, 0)
	var b strings.Builder
	for next := int64(0); next < o.Offset; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			b.Write(r.Value)
			b.WriteByte('\n')
			next = r.Offset + 1
		})
	}
	return b.String()
}

// deleteRecords moves the log start offset of partition 0 of topic to
// offset, as retention does (DeleteRecords).
func deleteRecords(t *testing.T, addr, topic string, offset int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := make(kadm.Offsets)
	os.Add(kadm.Offset{Topic: topic, Partition: 0, At: offset})
	resp, err := kadm.NewClient(cl).DeleteRecords(context.Background(), os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords: %v", err)
	}
}

// waitFile waits until file holds sub.
func waitFile(t *testing.T, file, sub string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(file); strings.Contains(string(b), sub) {
			return
		}
	}
	b, _ := os.ReadFile(file)
	t.Fatalf("%s never held %q:\n%s", file, sub, tail(string(b), 2000))
}
