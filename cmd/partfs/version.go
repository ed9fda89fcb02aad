package main

import (
	"runtime"
	"runtime/debug"
)

// version is the release this binary is and commit the commit it was
// built from, set at build time with -ldflags "-X main.version=v1.2.3 -X
// main.commit=..." (mount.sh and the system tests set commit through
// scripts/commit.sh). Otherwise both come from the build information: the
// module's version (a pseudo-version of `go install ...@COMMIT` names the
// commit) and the VCS revision Go stamps into a build from a checkout.
var version, commit = "", ""

// versionLine is what `partfs --version` prints: the version, the commit,
// and the Go release.
func versionLine() string {
	v, rev, modified := version, commit, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				modified = true
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if rev == "" {
		rev = "unknown (built without VCS stamping; build with mount.sh or -ldflags -X main.commit=...)"
	} else if modified && commit == "" {
		rev += "-dirty"
	}
	return "partfs " + v + " commit " + rev + " " + runtime.Version()
}
