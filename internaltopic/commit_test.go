package internaltopic

import "testing"

// TestGroupPartition: Java's String.hashCode and Kafka's Utils.abs, on
// values worked out by hand: "" hashes to 0, "a" to 97, "ab" to
// 97*31+98 = 3105; "polygenelubricants" hashes to the smallest int, which
// Kafka's abs makes 0; a name past the BMP hashes its UTF-16 surrogates.
func TestGroupPartition(t *testing.T) {
	for _, c := range []struct {
		group string
		n     int
		want  int
	}{
		{"", 50, 0}, {"a", 50, 97 % 50}, {"ab", 50, 3105 % 50}, {"polygenelubricants", 50, 0},
		// "𝄞" is U+1D11E: surrogates 0xD834 0xDD1E: 55348*31+56606 = 1772394
		{"𝄞", 50, 1772394 % 50},
		// where a Kafka broker put four groups of kafka-console-consumer in its
		// 50 partitions (a data directory published on GitHub)
		{"console-consumer-14897", 50, 0}, {"console-consumer-2399", 50, 2},
		{"console-consumer-89616", 50, 31}, {"console-consumer-76901", 50, 34},
		// "Aa" and "BB" collide in Java (2112)
		{"Aa", 7, 2112 % 7}, {"BB", 7, 2112 % 7},
	} {
		if got := GroupPartition(c.group, c.n); got != c.want {
			t.Errorf("GroupPartition(%q, %d) = %d, want %d", c.group, c.n, got, c.want)
		}
	}
	// a negative hash: "zzzzzzzz" overflows int32; its abs modulo 50
	var h int32
	for _, r := range "zzzzzzzz" {
		h = 31*h + r
	}
	if h >= 0 {
		t.Fatalf("want a negative hash, got %d", h)
	}
	if got, want := GroupPartition("zzzzzzzz", 50), int(-h)%50; got != want {
		t.Errorf("GroupPartition(zzzzzzzz) = %d, want %d", got, want)
	}
}

// TestOffsetCommitRecordDecodes: what OffsetCommitRecord writes, the
// decoders read back, folded and rendered.
func TestOffsetCommitRecordDecodes(t *testing.T) {
	k, v := OffsetCommitRecord("g", "orders", 3, 42, 1700000000000)
	var g Groups
	g.Apply(k, v)
	grp := g.Group("g")
	if grp == nil || grp.Offsets[TopicPartition{"orders", 3}] != 42 {
		t.Fatalf("folded: %+v", grp)
	}
	d, err := ConsumerOffsets.Decode(k, v)
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendValue(nil, d.Value))
	want := `{"version":3,"offset":42,"leaderEpoch":-1,"metadata":"","commitTimestamp":1700000000000}`
	if d.Type != "offset_commit" || got != want {
		t.Errorf("decoded %s %s, want offset_commit %s", d.Type, got, want)
	}
}
