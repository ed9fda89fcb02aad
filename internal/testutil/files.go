package testutil

import (
	"os"
	"testing"
)

// ReadFile returns the contents of the file at path, failing the test if
// it cannot be read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WriteFile writes b to the file at path (mode 0644), failing the test if
// it cannot be written.
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
