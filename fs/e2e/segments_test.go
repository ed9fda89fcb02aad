package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSegmentsServesOnlyKafkaFiles: segments/ lists and serves only Kafka's
// own files of the partition, never through a symbolic link: links in the
// partition directory to a root-only file outside the data directory (one
// under a Kafka segment name) are neither listed nor readable, nor are
// partfs's own sidecars; the real files read byte for byte and report
// their real blocks.
func TestSegmentsServesOnlyKafkaFiles(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && printf 'one\\ntwo\\nthree\\n' >> t/0/log")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root-only secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(e.data, "t-0")
	for _, name := range []string{"notes.txt", "00000000000000000042.log", "00000000000000000042.index"} {
		if err := os.Symlink(secret, filepath.Join(part, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(part, "notes-regular.txt"), []byte("not Kafka's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(part, "fs-positions.partfs"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls := e.Sh("ls t/0/segments")
	for _, name := range strings.Fields(ls) {
		if !strings.HasPrefix(name, "00000000000000000000.") && name != "leader-epoch-checkpoint" && name != "partition.metadata" {
			t.Errorf("segments/ lists %q:\n%s", name, ls)
		}
	}
	if !strings.Contains(ls, "00000000000000000000.log\n") {
		t.Fatalf("segments/ lacks the .log:\n%s", ls)
	}
	for _, name := range []string{"notes.txt", "00000000000000000042.log", "00000000000000000042.index", "notes-regular.txt", "fs-positions.partfs"} {
		out, err := e.Try("cat t/0/segments/" + name)
		if err == nil || !strings.Contains(err.Error(), "No such file") || strings.Contains(out, "secret") {
			t.Errorf("cat segments/%s: %q, %v; want ENOENT", name, out, err)
		}
	}
	e.Sh("cmp t/0/segments/00000000000000000000.log " + filepath.Join(part, "00000000000000000000.log"))
	want := e.Sh("stat -c '%s %b' " + filepath.Join(part, "00000000000000000000.log") + " " + filepath.Join(part, "00000000000000000000.index"))
	got := e.Sh("stat -c '%s %b' t/0/segments/00000000000000000000.log t/0/segments/00000000000000000000.index")
	if got != want {
		t.Errorf("segments/ size and blocks %q, on disk %q", got, want)
	}
	if strings.Contains(e.logs.String(), "root-only secret") {
		t.Error("the secret reached the log")
	}
}
