package fs

import (
	"errors"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
)

// TestParseTimeRelative: a relative time is now less a Go duration with a
// days term; one that does not fit a duration (about 292 years) is
// invalid, as time.ParseDuration's overflow is, never a time in the
// future.
func TestParseTimeRelative(t *testing.T) {
	now := time.UnixMilli(1_764_410_400_000)
	for s, want := range map[string]int64{
		"-10m":     now.Add(-10 * time.Minute).UnixMilli(),
		"-1h30m":   now.Add(-90 * time.Minute).UnixMilli(),
		"-2d":      now.Add(-48 * time.Hour).UnixMilli(),
		"-1d12h":   now.Add(-36 * time.Hour).UnixMilli(),
		"-106751d": now.Add(-106751 * 24 * time.Hour).UnixMilli(),
	} {
		got, err := parseTime(s, now)
		if err != nil || got != want {
			t.Errorf("parseTime(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"-106752d", "-106751d24h", "-9223372036854775807d", "-106751d23h47m16.854775808s", "-2562048h"} {
		if got, err := parseTime(s, now); !errors.Is(err, partlog.ErrInvalid) {
			t.Errorf("parseTime(%q) = %d, %v; want EINVAL", s, got, err)
		}
	}
}
