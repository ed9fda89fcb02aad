package fstest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CheckTree: mkdir makes a topic with partition 0 and its files; mkdir of
// a partition takes only the next number; names follow Kafka's rule; the
// lookup directories list nothing (docs/spec.md §2).
func CheckTree(t *testing.T, m *Mount) {
	p := m.topic("t")
	if names := m.names("t"); !hasAll(names, "config", "0") {
		t.Errorf("ls t = %q", names)
	}
	if names := m.names(p); !hasAll(names, "log", "log.jsonl", "stat", "@offset", "@time", "@key") {
		t.Errorf("ls %s = %q", p, names)
	}
	if names := m.names(""); !hasAll(names, "t") {
		t.Errorf("ls / = %q", names)
	}
	if err := os.Mkdir(m.Path("t/1"), 0o755); err != nil {
		t.Errorf("mkdir t/1: %v", err)
	}
	wantErrno(t, "mkdir t/3 (not the next partition)", os.Mkdir(m.Path("t/3"), 0o755), syscall.EINVAL)
	wantErrno(t, "mkdir t/0 (exists)", os.Mkdir(m.Path("t/0"), 0o755), syscall.EEXIST)
	wantErrno(t, "mkdir t (exists)", os.Mkdir(m.Path("t"), 0o755), syscall.EEXIST)
	wantErrno(t, "mkdir 'a b'", os.Mkdir(m.Path("a b"), 0o755), syscall.EINVAL)
	m.write(p+"/log", "x\n")
	for _, dir := range []string{"@offset", "@time", "@key"} {
		if names := m.names(p + "/" + dir); len(names) != 0 {
			t.Errorf("ls %s/%s = %q, want nothing", p, dir, names)
		}
	}
	_, err := os.Stat(m.Path("nope/0/log"))
	wantErrno(t, "stat of an unknown topic", err, syscall.ENOENT)
}

// CheckOffsetPaths: @offset/N, earliest, latest and ranges A..B, and
// their .jsonl forms (docs/spec.md §2).
func CheckOffsetPaths(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log", "a\nb\nc\nd\n")
	m.want(p+"/@offset/2", "c\nd\n")
	m.want(p+"/@offset/earliest", "a\nb\nc\nd\n")
	m.want(p+"/@offset/latest", "")
	m.want(p+"/@offset/1..3", "b\nc\n")
	m.want(p+"/@offset/4..4", "")
	_, err := os.Stat(m.Path(p + "/@offset/1..9"))
	wantErrno(t, "@offset/1..9 past the end", err, syscall.ENOENT)
	for _, bad := range []string{"x", "-1", "3..1"} {
		_, err := os.Stat(m.Path(p + "/@offset/" + bad))
		if err == nil {
			t.Errorf("@offset/%s resolved", bad)
		}
	}
	lines := strings.Split(strings.TrimSuffix(m.read(p+"/@offset/2.jsonl"), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"offset":2,`) || !strings.HasPrefix(lines[1], `{"offset":3,`) {
		t.Errorf("@offset/2.jsonl = %q", lines)
	}
}

// CheckTimePaths: @time/T with epoch milliseconds, RFC 3339, a time
// relative to now, earliest, latest, and a range (docs/spec.md §2).
func CheckTimePaths(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log.jsonl", `{"timestamp":1000,"value":"old"}`+"\n"+`{"timestamp":2000,"value":"mid"}`+"\n")
	m.write(p+"/log", "now\n")
	m.want(p+"/@time/1500", "mid\nnow\n")
	m.want(p+"/@time/1970-01-01T00:00:02Z", "mid\nnow\n")
	m.want(p+"/@time/earliest", "old\nmid\nnow\n")
	m.want(p+"/@time/latest", "")
	m.want(p+"/@time/-10m", "now\n")
	m.want(p+"/@time/1000..2000", "old\n")
	future := time.Now().Add(time.Hour).UnixMilli()
	m.want(p+fmt.Sprintf("/@time/%d", future), "")
	if got := m.read(p + "/@time/1500.jsonl"); !strings.HasPrefix(got, `{"offset":1,"timestamp":2000,`) {
		t.Errorf("@time/1500.jsonl = %q", got)
	}
}

// CheckRendering: log shows values, not tombstones, with raw bytes;
// log.jsonl shows every record in the exact rendered form, with null,
// base64 and escaped values (docs/spec.md §3).
func CheckRendering(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log.jsonl", `{"key":"k1","value":"v1","timestamp":1764410400000,"headers":[["h","x"],["n",null]]}
{"key":"k2","value_b64":"//79","timestamp":1764410400001}
{"key":"k1","timestamp":1764410400002}
{"offset":99,"value":"line\twith \"quotes\"","timestamp":1764410400003}
`)
	m.want(p+"/log.jsonl", `{"offset":0,"timestamp":1764410400000,"key":"k1","value":"v1","headers":[["h","x"],["n",null]]}
{"offset":1,"timestamp":1764410400001,"key":"k2","value_b64":"//79","headers":[]}
{"offset":2,"timestamp":1764410400002,"key":"k1","value":null,"headers":[]}
{"offset":3,"timestamp":1764410400003,"key":null,"value":"line\twith \"quotes\"","headers":[]}
`)
	m.want(p+"/log", "v1\n\xff\xfe\xfd\nline\twith \"quotes\"\n")
	for i, line := range strings.Split(strings.TrimSuffix(m.read(p+"/log.jsonl"), "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("log.jsonl line %d is not JSON: %v", i, err)
		}
	}
}

// CheckReadStopsAtOpenEnd: a read stops at the log end of the open, and
// an fstat through the open file moves it to the log end now
// (docs/spec.md §3).
func CheckReadStopsAtOpenEnd(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log", "one\n")
	f, err := os.Open(m.Path(p + "/log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m.write(p+"/log", "two\n")
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	if got := string(buf[:n]); got != "one\n" {
		t.Errorf("read after an append since the open = %q, want %q", got, "one\n")
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() < 8 {
		t.Fatalf("fstat: %v, size %v", err, fi)
	}
	n, _ = f.Read(buf)
	if got := string(buf[:n]); got != "two\n" {
		t.Errorf("read after fstat = %q, want %q", got, "two\n")
	}
}

// CheckAppendOnly: log and log.jsonl behave like chattr +a files: only
// O_APPEND opens write, and nothing else changes them (docs/spec.md §4).
func CheckAppendOnly(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log", "keep\n")
	for _, name := range []string{"log", "log.jsonl"} {
		path := m.Path(p + "/" + name)
		for what, flag := range map[string]int{"O_TRUNC": os.O_WRONLY | os.O_TRUNC, "O_WRONLY": os.O_WRONLY, "O_RDWR": os.O_RDWR} {
			f, err := os.OpenFile(path, flag, 0)
			if err == nil {
				f.Close()
			}
			wantErrno(t, name+" opened "+what, err, syscall.EPERM)
		}
		wantErrno(t, "truncate "+name, os.Truncate(path, 0), syscall.EPERM)
		wantErrno(t, "rm "+name, os.Remove(path), syscall.EPERM)
		wantErrno(t, "mv "+name, os.Rename(path, path+".old"), syscall.EPERM)
		wantErrno(t, "chmod "+name, os.Chmod(path, 0o600), syscall.EPERM)
	}
	m.want(p+"/log", "keep\n")
}

// CheckWriteLines: the lines of one write() are records with consecutive
// offsets; a partial line waits for its newline or the close; a compacted
// topic refuses keyless lines whole (docs/spec.md §4).
func CheckWriteLines(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log", "a\nb\n")
	f, err := os.OpenFile(m.Path(p+"/log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"c\npa", "rt", "ial\nheld"} {
		if _, err := f.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	m.want(p+"/log", "a\nb\nc\npartial\n")
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	m.want(p+"/log", "a\nb\nc\npartial\nheld\n")
	m.want(p+"/@offset/3", "partial\nheld\n")
	m.write("t/config", "cleanup.policy=compact\n")
	wantErrno(t, "a keyless line on a compacted topic", m.AppendOnce(p+"/log", "x\n"), syscall.EINVAL)
	m.want(p+"/@offset/latest", "")
	m.want(p+"/log", "a\nb\nc\npartial\nheld\n")
}

// CheckWriteJSONLines: log.jsonl takes objects of the rendered form; a
// line that is not one fails the whole write() and appends nothing
// (docs/spec.md §4).
func CheckWriteJSONLines(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log.jsonl", `{"offset":99,"key":"k","value":"v","headers":[["h","x"]]}`+"\n"+`{"value_b64":"aGk="}`+"\n")
	m.want(p+"/log", "v\nhi\n")
	for _, bad := range []string{"{\"value\":\"ok\"}\nnot json", `{"value":1}`, `{"value":"a","extra":1}`, `[1,2]`,
		`{"value":"a"} {"value":"b"}`, `{"key":"a","key_b64":"YQ=="}`, `{"timestamp":-5}`, `{"value_b64":"%%%"}`} {
		wantErrno(t, fmt.Sprintf("write %q", bad), m.AppendOnce(p+"/log.jsonl", bad+"\n"), syscall.EINVAL)
	}
	m.want(p+"/log", "v\nhi\n")
	if got := m.read(p + "/@offset/0.jsonl"); !strings.HasPrefix(got, `{"offset":0,`) || !strings.Contains(got, `"key":"k"`) {
		t.Errorf("the offset written is not kept: %q", got)
	}
}

// CheckKey: @key/K takes > and >> alike, writing one record with key K
// at close; it reads the latest value; rm writes a tombstone, which the
// plain view hides; a key never written is ENOENT (docs/spec.md §2, §4).
func CheckKey(t *testing.T, m *Mount) {
	p := m.topic("t")
	for _, w := range []struct {
		key, value string
		flag       int
	}{{"color", "blue\n", os.O_TRUNC}, {"color", "green\n", os.O_APPEND}, {"other", "x", os.O_TRUNC}} {
		f, err := os.OpenFile(m.Path(p+"/@key/"+w.key), os.O_WRONLY|os.O_CREATE|w.flag, 0o644)
		if err != nil {
			t.Fatalf("open @key/%s: %v", w.key, err)
		}
		if _, err := f.Write([]byte(w.value)); err != nil {
			t.Fatalf("write @key/%s: %v", w.key, err)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("close @key/%s: %v", w.key, err)
		}
	}
	m.want(p+"/@key/color", "green\n")
	m.want(p+"/@key/other", "x\n")
	if err := os.Remove(m.Path(p + "/@key/color")); err != nil {
		t.Fatalf("rm @key/color: %v", err)
	}
	for _, key := range []string{"color", "never"} {
		_, err := os.ReadFile(m.Path(p + "/@key/" + key))
		wantErrno(t, "read of @key/"+key, err, syscall.ENOENT)
	}
	m.want(p+"/log", "blue\ngreen\nx\n")
	var kv []string
	for _, line := range strings.Split(strings.TrimSuffix(m.read(p+"/log.jsonl"), "\n"), "\n") {
		var o struct{ Key, Value *string }
		if err := json.Unmarshal([]byte(line), &o); err != nil || o.Key == nil {
			t.Fatalf("log.jsonl line %q: %v", line, err)
		}
		v := "null"
		if o.Value != nil {
			v = *o.Value
		}
		kv = append(kv, *o.Key+"="+v)
	}
	if got := strings.Join(kv, " "); got != "color=blue color=green other=x color=null" {
		t.Errorf("records %s", got)
	}
}

// CheckConfigFile: config takes key=value lines and changes only those
// keys (the comments saying where each value comes from follow), and
// says the key came from the topic; a bad line or key changes nothing
// (docs/spec.md §4, §6).
func CheckConfigFile(t *testing.T, m *Mount) {
	m.topic("t")
	before := m.read("t/config")
	m.write("t/config", "retention.ms=3600000\n")
	after := m.read("t/config")
	if !strings.Contains(after, "retention.ms=3600000\n") {
		t.Errorf("config after the write:\n%s", after)
	}
	for _, line := range strings.Split(before, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "retention.ms=") && !strings.Contains(after, line+"\n") {
			t.Errorf("config line %q changed by a write of retention.ms", line)
		}
	}
	if !strings.Contains(after, "\n# topic: retention.ms\n") {
		t.Errorf("config after the write does not say retention.ms is the topic's:\n%s", after)
	}
	wantErrno(t, "config line without =", m.AppendOnce("t/config", "nonsense\n"), syscall.EINVAL)
	wantErrno(t, "unknown config key", m.AppendOnce("t/config", "no.such.key=1\n"), syscall.EINVAL)
	if got := m.read("t/config"); got != after {
		t.Errorf("refused config writes changed it:\n%s", got)
	}
}

// CheckGroups: writing TOPIC PARTITION OFFSET to .groups/G commits it, and
// .groups/G shows it as kafka-consumer-groups.sh --describe does; bad lines
// commit nothing (docs/spec.md §12).
func CheckGroups(t *testing.T, m *Mount) {
	p := m.topic("t")
	m.write(p+"/log", "a\nb\nc\n")
	if err := os.WriteFile(m.Path(".groups/g"), []byte("t 0 1\n"), 0o644); err != nil {
		t.Fatalf("commit t 0 1 to .groups/g: %v", err)
	}
	got := m.read(".groups/g")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "GROUP") || strings.Join(strings.Fields(lines[1])[:6], " ") != "g t 0 1 3 2" {
		t.Errorf(".groups/g after committing t 0 1:\n%s", got)
	}
	if names := m.names(".groups"); !hasAll(names, "g") {
		t.Errorf("ls .groups = %q", names)
	}
	wantErrno(t, "commit to an unknown partition", m.AppendOnce(".groups/g", "t 7 1\n"), syscall.ENOENT)
	wantErrno(t, "a malformed commit", m.AppendOnce(".groups/g", "t 0 one\n"), syscall.EINVAL)
	if again := m.read(".groups/g"); again != got {
		t.Errorf("refused commits changed .groups/g:\n%s", again)
	}
}
