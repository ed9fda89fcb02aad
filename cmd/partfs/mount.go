package main

import (
	"fmt"
	"os"
)

// mountCmd is replaced by the filesystem's wiring.
func mountCmd(args []string) int {
	fmt.Fprintln(os.Stderr, "partfs mount: not yet")
	return 1
}
