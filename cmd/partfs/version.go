package main

import (
	"runtime"
	"runtime/debug"
)

// version is the release this binary is, set at build time with
// -ldflags "-X main.version=v1.2.3"; otherwise the module's version from
// the build information ("(devel)" for a build from a checkout).
var version = ""

// versionLine is what `partfs --version` prints: the version, the VCS
// revision when the build recorded one, and the Go release.
func versionLine() string {
	v, rev := version, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	line := "partfs " + v
	if rev != "" {
		line += " " + rev
	}
	return line + " " + runtime.Version()
}
