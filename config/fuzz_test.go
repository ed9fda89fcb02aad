package config

import "testing"

// FuzzSetAndParse: no panic on any text; a value Set accepts is shown by
// Get in a form Set accepts again with the same result.
func FuzzSetAndParse(f *testing.F) {
	f.Add("retention.ms", "1000")
	f.Add("cleanup.policy", "compact, delete")
	f.Add("min.cleanable.dirty.ratio", "5e-1")
	f.Add("segment.bytes", "-0")
	f.Fuzz(func(t *testing.T, key, value string) {
		ParseLines(key + "=" + value + "\n" + value) //nolint:errcheck // must not panic
		d := Defaults()
		if d.Set(key, value) != nil {
			if d != Defaults() {
				t.Fatal("failed Set changed the topic")
			}
			return
		}
		shown, _ := d.Get(key)
		again := Defaults()
		if err := again.Set(key, shown); err != nil || again != d {
			t.Fatalf("%s=%q shown as %q does not round trip: %v", key, value, shown, err)
		}
	})
}
