// Package testfixtures finds the real Kafka record sets the tests read:
// shared/fixtures/kafka beside the checkout (PARTFS_FIXTURES overrides).
// Where they are missing a test is skipped, except under CI, where it fails.
package testfixtures

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the fixtures directory, looking in shared/fixtures/kafka
// beside every directory from the working directory up.
func Dir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("PARTFS_FIXTURES"); dir != "" {
		return check(t, dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		dir := filepath.Join(d, "shared", "fixtures", "kafka")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return check(t, filepath.Join(wd, "..", "..", "shared", "fixtures", "kafka"))
}

// Path returns the fixture file rel (e.g. "kafkajs/v0_recordbatch.bin").
func Path(t testing.TB, rel string) string {
	t.Helper()
	return check(t, filepath.Join(Dir(t), rel))
}

func check(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Kafka fixtures not found: %v", err)
		}
		t.Fatalf("Kafka fixtures not found (CI must have shared/ beside the checkout): %v", err)
	}
	return path
}
