package main

import (
	"fmt"
	"os"
)

func dumpCmd(args []string) int {
	fmt.Fprintln(os.Stderr, "partfs dump: not yet")
	return 1
}

func checkCmd(args []string) int {
	fmt.Fprintln(os.Stderr, "partfs check: not yet")
	return 1
}
