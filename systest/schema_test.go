package systest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/partfs/partfs/internal/testutil"
)

// srclient returns the directory of testdata/srclient with its npm
// packages (kafkajs, @kafkajs/confluent-schema-registry) installed by
// test.sh. Where node or the packages are missing the test is skipped,
// unless CI is set.
func srclient(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("testdata", "srclient"))
	_, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@kafkajs", "confluent-schema-registry"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and the srclient npm packages are needed (test.sh installs them): %v", err)
		}
		t.Skipf("node or the srclient npm packages missing (test.sh installs them): %v", err)
	}
	return dir
}

// runNode runs srclient.js with args and stdin.
func runNode(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "srclient.js")}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node srclient.js %s: %v\n%s", args[0], err, errb.String())
	}
	return out.String()
}

// TestSchemaRegistryKafkajs: records produced by kafkajs with
// @kafkajs/confluent-schema-registry's serializers (Avro keys and values,
// Protobuf first and second messages, JSON Schema) into a cluster read
// through a mount as the JSON they were made of, with the schemas from a
// registry stand-in that needs basic auth over TLS; JSON written through
// the mount decoded back by that library; a registry that is down fails
// only reads that need a schema not cached, with ETIMEDOUT.
func TestSchemaRegistryKafkajs(t *testing.T) {
	dir := srclient(t)
	_, addr := kafkaCluster(t, kfake.SeedTopics(1, "people", "events", "jsonev", "written", "plain", "later"))
	reg := srfake.New(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("u:pw"))))
	defer reg.Close()
	srv := httptest.NewTLSServer(reg.Handler())
	defer srv.Close()
	tmp := t.TempDir()
	ca, pass := filepath.Join(tmp, "ca.pem"), filepath.Join(tmp, "pass")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pass, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"NODE_EXTRA_CA_CERTS=" + ca}
	var produced []struct {
		Topic string `json:"topic"`
		Key   any    `json:"key"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal([]byte(runNode(t, dir, env, "", "produce", addr, srv.URL, "u", "pw")), &produced); err != nil {
		t.Fatal(err)
	}
	d := kafkaMount(t, addr, "", "--schema-registry", srv.URL, "--schema-registry-user", "u",
		"--schema-registry-password-file", pass, "--schema-registry-ca", ca)

	got := map[string][]map[string]any{}
	for _, topic := range []string{"people", "events", "jsonev"} {
		for _, line := range strings.Split(strings.TrimSpace(d.sh("cat "+topic+"/0/log.jsonl")), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%s: %q: %v", topic, line, err)
			}
			got[topic] = append(got[topic], m)
		}
	}
	seen := map[string]int{}
	for _, p := range produced {
		i := seen[p.Topic]
		seen[p.Topic]++
		if i >= len(got[p.Topic]) {
			t.Fatalf("%s: record %d missing", p.Topic, i)
		}
		m := got[p.Topic][i]
		if !reflect.DeepEqual(m["value"], p.Value) || m["value_schema_id"] == nil || m["value_error"] != nil {
			t.Errorf("%s record %d:\n got %v\nwant %v", p.Topic, i, m, p.Value)
		}
		if p.Key != nil && (!reflect.DeepEqual(m["key"], p.Key) || m["key_schema_id"] == nil) {
			t.Errorf("%s record %d key: got %v want %v", p.Topic, i, m["key"], p.Key)
		}
	}
	if plain := d.sh("head -1 people/0/log"); !strings.HasPrefix(plain, `{"name":"Ann","age":31,`) {
		t.Errorf("log: %q", plain)
	}

	// written through the mount, decoded by the other stack
	written := []string{
		`{"name":"Cy","age":4,"tags":["q"],"kind":"GUEST","score":2,"when":5,"attrs":{"a":-1},"home":{"city":"Rome"}}`,
		`{"name":"Di","age":null,"tags":[],"kind":"STAFF","score":0.5,"when":6,"attrs":{},"home":null}`,
	}
	d.sh("printf '%s\\n' '{\"value\":" + written[0] + "}' >> written/0/log.jsonl")
	d.sh("printf '%s\\n' '" + written[1] + "' >> written/0/log")
	var hexes []string
	for _, v := range consumeAll(t, addr, "written", len(written)) {
		hexes = append(hexes, hex.EncodeToString(v))
	}
	decoded := strings.Split(strings.TrimSpace(runNode(t, dir, env, strings.Join(hexes, "\n")+"\n", "decode", srv.URL, "u", "pw")), "\n")
	for i, w := range written {
		var a, b any
		_ = json.Unmarshal([]byte(w), &a)
		if i >= len(decoded) || json.Unmarshal([]byte(decoded[i]), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("written %d decoded by the other stack as %v, want %s", i, decoded, w)
		}
	}

	// the registry goes away: a record naming an uncached schema fails
	// its read with ETIMEDOUT; records without the wire format still read
	produceRaw(t, addr, "later", []byte{0, 0, 0, 0x3, 0xe7, 1})
	produceRaw(t, addr, "plain", []byte("text"))
	srv.Close()
	start := time.Now()
	if out, err := testutil.Sh(d.mnt, "cat later/0/log.jsonl", 30*time.Second); err == nil || !strings.Contains(out+err.Error(), "timed out") {
		t.Errorf("registry down: %q %v", out, err)
	}
	if el := time.Since(start); el > 7*time.Second {
		t.Errorf("registry down: the read took %v (--kafka-timeout 5s)", el)
	}
	if out := d.sh("cat plain/0/log; head -1 people/0/log"); !strings.HasPrefix(out, "text\n{\"name\":\"Ann\"") {
		t.Errorf("registry down, plain and cached: %q", out)
	}
}

func consumeAll(t *testing.T, addr, topic string, n int) [][]byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out [][]byte
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s: %v (have %d of %d)", topic, err, len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r.Value) })
	}
	return out
}

func produceRaw(t *testing.T, addr, topic string, v []byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaClusterTopic: on a cluster mount without --schema-registry,
// schemas come from the cluster's _schemas topic (as Schema Registry
// writes it), including one registered while mounted; .schemas/ lists
// them and registers into that topic.
func TestSchemaClusterTopic(t *testing.T) {
	_, addr := kafkaCluster(t, kfake.SeedTopics(1, "_schemas", "pets"))
	put := func(subject string, version, id int, schema string) {
		key := fmt.Sprintf(`{"keytype":"SCHEMA","subject":%q,"version":%d,"magic":1}`, subject, version)
		val, _ := json.Marshal(map[string]any{"subject": subject, "version": version, "id": id, "schema": schema, "deleted": false})
		produceRecord(t, addr, &kgo.Record{Topic: "_schemas", Key: []byte(key), Value: val})
	}
	put("pets-value", 1, 11, `{"type":"record","name":"Pet","fields":[{"name":"name","type":"string"}]}`)
	produceRaw(t, addr, "pets", []byte{0, 0, 0, 0, 11, 6, 'r', 'e', 'x'})
	d := kafkaMount(t, addr, "")
	if got := d.sh("cat pets/0/log"); got != "{\"name\":\"rex\"}\n" {
		t.Fatalf("log: %q", got)
	}
	put("pets-key", 1, 12, `"string"`)
	produceRecord(t, addr, &kgo.Record{Topic: "pets", Key: []byte{0, 0, 0, 0, 12, 2, 'k'}, Value: []byte{0, 0, 0, 0, 11, 2, 'x'}})
	if got := d.sh("tail -1 pets/0/log.jsonl"); !strings.Contains(got, `"key":"k","key_schema_id":12,"value":{"name":"x"},"value_schema_id":11`) {
		t.Fatalf("log.jsonl: %q", got)
	}
	d.sh(`echo '{"name":"ivy"}' >> pets/0/log && ls .schemas/pets-value`)
	if got := d.sh("tail -1 pets/0/log"); got != "{\"name\":\"ivy\"}\n" {
		t.Fatalf("written: %q", got)
	}
}

func produceRecord(t *testing.T, addr string, r *kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
