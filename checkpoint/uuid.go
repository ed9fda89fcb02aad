package checkpoint

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// UUID is Kafka's Uuid: 16 bytes, shown as 22 characters of unpadded
// base64url (topic ids, cluster.id, directory.id).
type UUID [16]byte

// String renders u as Kafka does.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// IsZero reports the all-zero UUID (Kafka's ZERO_UUID, never valid).
func (u UUID) IsZero() bool { return u == UUID{} }

// ParseUUID parses Kafka's 22-character base64url form.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) != 22 {
		return u, fmt.Errorf("uuid %q: want 22 base64url characters", s)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("uuid %q: not base64url: %v", s, err)
	}
	copy(u[:], b)
	return u, nil
}

// RandomUUID returns a version-4 UUID read from r (crypto/rand.Reader),
// skipping values Kafka reserves (zero, one) or whose string form starts
// with '-', as Uuid.randomUuid does.
func RandomUUID(r io.Reader) (UUID, error) {
	for {
		var u UUID
		if _, err := io.ReadFull(r, u[:]); err != nil {
			return u, fmt.Errorf("random uuid: %w", err)
		}
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		one := UUID{15: 1}
		if u != one && !u.IsZero() && !strings.HasPrefix(u.String(), "-") {
			return u, nil
		}
	}
}
