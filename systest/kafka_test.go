package systest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/partfs/partfs/internal/testutil"
)

// kafkaCluster starts an in-process cluster (testutil.Kafka) and returns
// its bootstrap address.
func kafkaCluster(t *testing.T, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c := testutil.Kafka(t, opts...)
	return c, strings.Join(c.ListenAddrs(), ",")
}

// kafkaMount mounts the cluster at addr with `partfs mount --kafka`; the
// positions cache lives in cache (a fresh directory when "").
func kafkaMount(t *testing.T, addr, cache string, extra ...string) *daemon {
	t.Helper()
	if cache == "" {
		cache = t.TempDir()
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	args := append([]string{"--kafka", addr, "--cache-dir", cache, "--kafka-timeout", "5s"}, extra...)
	return startDaemon(t, "", mnt, args...)
}

// kcatMount skips the test where kcat is missing, else starts a cluster
// and mounts it.
func kcatMount(t *testing.T) (*kfake.Cluster, string, *daemon) {
	t.Helper()
	testutil.Kcat(t)
	c, addr := kafkaCluster(t)
	return c, addr, kafkaMount(t, addr, "")
}

// kcat runs kcat against addr (testutil.RunKcat).
func kcat(t *testing.T, addr, stdin string, args ...string) string {
	t.Helper()
	return testutil.RunKcat(t, stdin, append([]string{"-b", addr}, args...)...)
}

// sh runs a script in the mount and fails the test on an error.
func (d *daemon) sh(script string) string {
	d.t.Helper()
	out, err := testutil.Sh(d.mnt, script, 60*time.Second)
	if err != nil {
		d.t.Fatalf("%s: %v\ndaemon log:\n%s", script, err, tail(d.log.String(), 3000))
	}
	return out
}

// shOnceUp runs script in the mount (10 s each time) every 200 ms until it
// succeeds, for up to 20 s (a cluster coming back), and returns its last
// output and error.
func (d *daemon) shOnceUp(script string) (string, error) {
	var out string
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if out, err = testutil.Sh(d.mnt, script, 10*time.Second); err == nil {
			break
		}
	}
	return out, err
}

// jsonRec is one line of log.jsonl.
type jsonRec struct {
	Offset    int64       `json:"offset"`
	Timestamp int64       `json:"timestamp"`
	Key       *string     `json:"key"`
	Value     *string     `json:"value"`
	Headers   [][2]string `json:"headers"`
}

// parseJSONL parses what a read of log.jsonl gave (lines up to 1 MiB): the
// records before the first line that is not one, and an error naming that
// line.
func parseJSONL(raw []byte) ([]jsonRec, error) {
	var recs []jsonRec
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r jsonRec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return recs, fmt.Errorf("torn or corrupt line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// jsonlRecs is parseJSONL of text that must be records only.
func jsonlRecs(t testing.TB, text string) []jsonRec {
	t.Helper()
	recs, err := parseJSONL([]byte(text))
	if err != nil {
		t.Fatalf("log.jsonl: %v", err)
	}
	return recs
}

// kcatFormat prints what the mount's log.jsonl holds, one record a line.
const kcatFormat = "%o|%T|%k|%s|%h\n"

// asKcat renders JSON records as kcat -f kcatFormat -Z prints them (NULL
// for a null key or value, headers as k=v joined by commas).
func asKcat(recs []jsonRec) string {
	var b strings.Builder
	str := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return *p
	}
	for _, r := range recs {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, h[0]+"="+h[1])
		}
		fmt.Fprintf(&b, "%d|%d|%s|%s|%s\n", r.Offset, r.Timestamp, str(r.Key), str(r.Value), strings.Join(hs, ","))
	}
	return b.String()
}

// TestKafkaKcatProducesMountReads: what kcat -P produces with keys and
// headers, in every codec, reads through the mount as kcat -C reads it.
func TestKafkaKcatProducesMountReads(t *testing.T) {
	_, addr, d := kcatMount(t)
	var input strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&input, "key%d:value %d ünïcode\n", i%7, i)
	}
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		topic := "kcat-" + codec
		d.sh("mkdir " + topic)
		kcat(t, addr, input.String(), "-P", "-t", topic, "-p", "0", "-z", codec, "-K:", "-H", "h1=x", "-H", "h2=y y")
		want := kcat(t, addr, "", "-C", "-t", topic, "-p", "0", "-e", "-q", "-Z", "-f", kcatFormat)
		got := asKcat(jsonlRecs(t, d.sh("cat "+topic+"/0/log.jsonl")))
		if got != want || strings.Count(want, "\n") != 300 {
			t.Errorf("%s: log.jsonl as kcat prints it:\n%.600s\nkcat -C:\n%.600s", codec, got, want)
		}
		plain := kcat(t, addr, "", "-C", "-t", topic, "-p", "0", "-e", "-q", "-f", "%s\n")
		if got := d.sh("cat " + topic + "/0/log"); got != plain {
			t.Errorf("%s: log:\n%.300s\nkcat:\n%.300s", codec, got, plain)
		}
	}
}

// TestKafkaMountWritesKcatReads: what partfs writes (log lines, JSON lines
// with keys, headers and timestamps, @key/K and its tombstone) kcat -C
// reads identically.
func TestKafkaMountWritesKcatReads(t *testing.T) {
	_, addr, d := kcatMount(t)
	d.sh(`mkdir t && printf 'one\ntwo\n' >> t/0/log && echo three >> t/0/log
printf '%s\n' '{"key":"k1","value":"v1","timestamp":1764410400000,"headers":[["h","x"]]}' '{"value":"v2","timestamp":1764410400001}' >> t/0/log.jsonl
printf 'latest' > t/0/@key/k1 && test "$(cat t/0/@key/k1)" = latest && rm t/0/@key/k1 && ! cat t/0/@key/k1`)
	got := kcat(t, addr, "", "-C", "-t", "t", "-p", "0", "-e", "-q", "-Z", "-f", "%o|%k|%s|%h\n")
	want := "0|NULL|one|\n1|NULL|two|\n2|NULL|three|\n3|k1|v1|h=x\n4|NULL|v2|\n5|k1|latest|\n6|k1|NULL|\n"
	if got != want {
		t.Fatalf("kcat -C after partfs wrote:\n%s\nwant:\n%s", got, want)
	}
	ts := kcat(t, addr, "", "-C", "-t", "t", "-p", "0", "-o", "3", "-c", "2", "-e", "-q", "-f", "%T\n")
	if ts != "1764410400000\n1764410400001\n" {
		t.Fatalf("timestamps as kcat reads them: %q", ts)
	}
	if got := d.sh("cat t/0/log"); got != "one\ntwo\nthree\nv1\nv2\nlatest\n" {
		t.Fatalf("through the mount: %q", got)
	}
	if out := asKcat(jsonlRecs(t, d.sh("cat t/0/log.jsonl"))); out != kcat(t, addr, "", "-C", "-t", "t", "-p", "0", "-e", "-q", "-Z", "-f", kcatFormat) {
		t.Fatalf("log.jsonl differs from kcat -C:\n%s", out)
	}
}
