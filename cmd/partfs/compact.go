package main

import (
	"fmt"
	"os"
)

// compactCmd is replaced by the cleaner's wiring.
func compactCmd(args []string) int {
	fmt.Fprintln(os.Stderr, "partfs compact: not yet")
	return 1
}
