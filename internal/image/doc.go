// Package image builds flotilla's container image without a Docker daemon,
// with go-containerregistry: a static binary on an empty base (scratch), a
// CA bundle, /etc/passwd and /etc/group with the non-root user 65532, and
// the binary as the entrypoint, so `controlplane`, `crossplane` or a
// pull-mode member's `agent` is chosen by the container's arguments.
//
// The build is reproducible: the same commit built with the same Go
// toolchain gives the same image digest. Every timestamp (the image's
// created time, the history and every file in the layers) is the commit
// time, or SOURCE_DATE_EPOCH when it is set; the binary is built with
// -trimpath and an empty build ID; the layers' files are written in sorted
// order with fixed owners and modes.
//
// `make image` runs cmd/flotilla-image, which calls Build and then
// WriteLayout and WriteTarball; the package's tests call the same functions.
// BuildPackage wraps that tarball into the Crossplane provider package with
// the crossplane CLI (`make xpkg`, cmd/flotilla-image -xpkg).
// Nothing here is linked into the flotilla binary, and the package imports
// neither controlplane nor provider (it runs the go command on the module).
package image
