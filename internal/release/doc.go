// Package release checks what `make release-snapshot` (scripts/release.sh)
// writes: that the provider's zips, checksums and registry manifest have the
// Terraform Registry's layout, and that the binary, the image, the Crossplane
// package and both charts carry one version. The release build runs it as its
// last step (cmd/release-verify), and its test runs the whole build.
package release
