package tlsfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrorsNameFlags: a CA file that cannot be read or holds no
// certificate, and a certificate without its key, are refused with the
// flags' names; no files give the system's defaults.
func TestConfigErrorsNameFlags(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cert, key := File{Flag: "--cert"}, File{Flag: "--key"}
	for _, tc := range []struct {
		ca, cert, key File
		want          string
	}{
		{File{filepath.Join(dir, "none.pem"), "--ca"}, cert, key, "--ca: open "},
		{File{junk, "--ca"}, cert, key, "--ca " + junk + ": no PEM certificate"},
		{File{}, File{junk, "--cert"}, key, "--cert and --key go together"},
		{File{}, File{junk, "--cert"}, File{junk, "--key"}, "--cert/--key: "},
	} {
		if _, err := Config(tc.ca, tc.cert, tc.key); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Config(%v, %v, %v): %v, want %q", tc.ca, tc.cert, tc.key, err, tc.want)
		}
	}
	tc, err := Config(File{}, cert, key)
	if err != nil || tc.RootCAs != nil || len(tc.Certificates) != 0 {
		t.Fatalf("no files: %+v %v", tc, err)
	}
}
