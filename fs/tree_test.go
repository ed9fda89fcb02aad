package fs

import (
	"strings"
	"testing"

	"github.com/partfs/partfs/partlog/memlog"
)

func TestTreeMkdirListStat(t *testing.T) {
	m, _ := mountMem(t, memlog.Options{})
	m.Sh("mkdir orders && mkdir orders/1")
	if got := m.Sh("ls"); got != "orders\n" {
		t.Fatalf("ls = %q", got)
	}
	if got := m.Sh("ls orders | tr '\\n' ' '"); got != "0 1 config " {
		t.Fatalf("ls orders = %q", got)
	}
	want := "@key @offset @time log log.jsonl stat " // memlog has no segment files: no segments/
	if got := m.Sh("ls orders/0 | tr '\\n' ' '"); got != want {
		t.Fatalf("ls orders/0 = %q, want %q", got, want)
	}
	if _, err := m.Try("ls orders/0/segments"); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("ls orders/0/segments on memlog: %v", err)
	}
	if got := m.Sh("stat -c '%F %a %s' orders/0/log orders orders/0/stat"); got != "regular empty file 644 0\ndirectory 755 0\nregular file 444 "+sizeOf(m, "orders/0/stat")+"\n" {
		t.Fatalf("stat = %q", got)
	}
	st := m.Sh("cat orders/0/stat")
	for _, k := range []string{"log_start_offset: 0", "log_end_offset: 0", "records: 0", "cleanup_policy: delete"} {
		if !strings.Contains(st, k+"\n") {
			t.Errorf("stat lacks %q:\n%s", k, st)
		}
	}
	if _, err := m.Try("mkdir orders/3"); err == nil || !strings.Contains(err.Error(), "Invalid argument") {
		t.Fatalf("mkdir orders/3: %v", err)
	}
	if _, err := m.Try("mkdir orders"); err == nil || !strings.Contains(err.Error(), "File exists") {
		t.Fatalf("mkdir orders again: %v", err)
	}
}

func sizeOf(m *mounted, rel string) string {
	return strings.TrimSpace(m.Sh("cat " + rel + " | wc -c"))
}

func TestConfigReadWrite(t *testing.T) {
	m, st := mountMem(t, memlog.Options{})
	m.Sh("mkdir t")
	if got := m.Sh("grep '^retention.ms=' t/config"); got != "retention.ms=604800000\n" {
		t.Fatalf("default retention.ms = %q", got)
	}
	m.Sh("echo retention.ms=1000 >> t/config")
	m.Sh("printf 'segment.bytes=4096\\ncleanup.policy=compact\\n' > t/config")
	got := m.Sh("grep -E '^(retention.ms|segment.bytes|cleanup.policy)=' t/config")
	if got != "cleanup.policy=compact\nsegment.bytes=4096\nretention.ms=1000\n" {
		t.Fatalf("config after writes = %q", got)
	}
	for _, bad := range []string{"nosuch.key=1", "retention.ms=soon", "no equals sign"} {
		if _, err := m.Try("echo '" + bad + "' >> t/config"); err == nil || !strings.Contains(err.Error(), "Invalid argument") {
			t.Errorf("write %q: %v", bad, err)
		}
	}
	kvs, _ := st.TopicConfig("t")
	for _, kv := range kvs {
		if kv.Key == "retention.ms" && kv.Value != "1000" {
			t.Errorf("store retention.ms = %s", kv.Value)
		}
	}
	if !strings.Contains(m.log.Buf.String(), "nosuch.key") {
		t.Errorf("no log line names the bad key:\n%s", m.log.Buf.String())
	}
}

// TestPartitionDirEntries: a partition directory lists exactly the
// entries of partEntries this partition has, with their types, in table
// order, and a lookup of one it lacks (segments/ on memlog) is ENOENT.
func TestPartitionDirEntries(t *testing.T) {
	m, _ := mountMem(t, memlog.Options{})
	m.Sh("mkdir t")
	if got := m.Sh("ls -U t/0"); got != "log\nlog.jsonl\n@offset\n@time\n@key\nstat\n" {
		t.Fatalf("ls -U t/0 = %q", got)
	}
	want := "log regular empty file\nlog.jsonl regular empty file\n@offset directory\n@time directory\n@key directory\nstat regular file\n"
	if got := m.Sh("cd t/0 && for f in log log.jsonl @offset @time @key stat; do echo \"$f $(stat -c %F $f)\"; done"); got != want {
		t.Fatalf("types:\n%s\nwant:\n%s", got, want)
	}
	if out, err := m.Try("ls t/0/segments"); err == nil {
		t.Fatalf("segments/ on memlog: %q", out)
	}
}
