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
