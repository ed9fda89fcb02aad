package internaltopic

import (
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed internal-topic record")

func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}
