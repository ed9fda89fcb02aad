package docs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSpecInStep checks that the repository's copies of the shared documents
// are the shared documents, where a checkout has them beside it (as CI does):
// the contract is kept in the repository, not rewritten there.
func TestSpecInStep(t *testing.T) {
	shared := sharedDir()
	if shared == "" {
		t.Skip("no shared folder beside the checkout")
	}
	for copy, orig := range map[string]string{
		"spec.md":            "SPEC.md",
		"kafka-format.md":    "docs/kafka-format.md",
		"kafka-cluster.md":   "docs/kafka-cluster.md",
		"schema-registry.md": "docs/schema-registry.md",
	} {
		want, err := os.ReadFile(filepath.Join(shared, orig))
		if err != nil {
			t.Errorf("shared %s: %v", orig, err)
			continue
		}
		got, err := os.ReadFile(copy)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/%s differs from the shared %s: copy it again (cp shared/%s docs/%s)", copy, orig, orig, copy)
		}
	}
}

// sharedDir finds the shared folder beside a directory from here up.
func sharedDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "shared", "SPEC.md")); err == nil && st.Mode().IsRegular() {
			return filepath.Join(d, "shared")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
