// Package version holds the build version of the flotilla binary. It is set at
// link time with -ldflags "-X .../internal/version.Version=v1.2.3" and imports nothing.
package version

// Version is the released version, or "dev" for a local build.
var Version = "dev"

// Commit is the source revision the binary was built from, when known.
var Commit = ""

// String returns the version with the commit, as printed by `terraform-provider-flotilla version`.
func String() string {
	if Commit == "" {
		return Version
	}
	return Version + " (" + Commit + ")"
}
