package record

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no codec (zstd, gzip, lz4 state kept by Encoders and
// Decoders) leaves goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
