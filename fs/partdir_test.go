package fs

import (
	"testing"

	"github.com/partfs/partfs/partlog/memlog"
)

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
