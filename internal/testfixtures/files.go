package testfixtures

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files returns the fixture directory and every .bin fixture in it
// (relative names).
func Files(t testing.TB) (string, []string) {
	dir := Dir(t)
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".bin") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("listing fixtures: %v (%d files)", err, len(out))
	}
	return dir, out
}

// Expected returns the fixture directory and every fixture that has the
// records it must give beside it (NAME.expected.jsonl, docs/spec.md §3
// lines), by relative name.
func Expected(t testing.TB) (string, []string) {
	dir := Dir(t)
	exps, _ := filepath.Glob(filepath.Join(dir, "*", "*.expected.jsonl"))
	if len(exps) < 30 {
		t.Fatalf("only %d expected files in %s", len(exps), dir)
	}
	out := make([]string, len(exps))
	for i, e := range exps {
		out[i], _ = filepath.Rel(dir, strings.TrimSuffix(e, ".expected.jsonl"))
	}
	return dir, out
}

// EndsCut reports whether fixture rel ends inside a batch (a fetch
// response cut short): a reader gives the records before the cut, then
// reports the file truncated.
func EndsCut(rel string) bool { return strings.Contains(rel, "index_out_of_range") }
