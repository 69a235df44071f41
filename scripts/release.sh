#!/usr/bin/env bash
# make release-snapshot: every artifact a release publishes, from one version
# (scripts/version.sh), into bin/release:
#   goreleaser/  the Terraform Registry's layout: one zip per platform
#                (terraform-provider-flotilla_<v>_<os>_<arch>.zip), <v>_SHA256SUMS
#                covering them and <v>_manifest.json, and <v>_SHA256SUMS.sig when
#                GPG_FINGERPRINT names a secret key gpg holds (unsigned otherwise)
#   flotilla-image_<v>.tar and image/   the image, tagged ghcr.io/flotilla-io/flotilla:<v>
#   flotilla-provider_<v>.xpkg          the Crossplane package around that image
#   charts/flotilla-<v>.tgz, charts/flotilla-agent-<v>.tgz   version and appVersion <v>
#   VERSION
# RELEASE_SINGLE_TARGET=1 builds the provider for this machine's platform only
# (the test does, to stay fast); a release builds every platform.
# RELEASE_PUBLISH=1 (the release workflow, on a tag) has goreleaser publish the
# zips, checksums, signature and manifest to the tag's GitHub release.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GORELEASER:?path of the pinned goreleaser}" "${HELM:?path of the pinned helm}" "${CROSSPLANE:?path of the pinned crossplane CLI}"
out=${RELEASE_DIR:-bin/release}
version=$(bash scripts/version.sh)
echo "== release: version $version into $out"
rm -rf "$out"
mkdir -p "$out/charts"

args=(release --snapshot --clean)
if [[ -n "${RELEASE_PUBLISH:-}" ]]; then
	if ! git describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' >/dev/null 2>&1; then
		echo "release: RELEASE_PUBLISH needs HEAD to be a vX.Y.Z tag; it is not" >&2
		exit 1
	fi
	args=(release --clean)
fi
if [[ -n "${RELEASE_SINGLE_TARGET:-}" ]]; then
	# goreleaser's release has no single-target switch: the same configuration with this platform only.
	mkdir -p bin
	sed -e "s/^    goos: .*/    goos: [$(go env GOOS)]/" -e "s/^    goarch: .*/    goarch: [$(go env GOARCH)]/" .goreleaser.yaml >bin/goreleaser-single.yaml
	args+=(--config bin/goreleaser-single.yaml)
fi
if [[ -z "${GPG_FINGERPRINT:-}" ]]; then
	echo "== release: GPG_FINGERPRINT is not set: the SHA256SUMS file is left unsigned"
	args+=(--skip=sign)
fi
FLOTILLA_VERSION="$version" FLOTILLA_COMMIT="$(git rev-parse HEAD)" SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)" \
	"$GORELEASER" "${args[@]}"
# The checksums cover the registry manifest under its release name; a
# release uploads it from the repository, a snapshot places it beside them.
cp terraform-registry-manifest.json "bin/release/goreleaser/terraform-provider-flotilla_${version}_manifest.json"
if [[ "$out" != bin/release ]]; then
	mv bin/release/goreleaser "$out/goreleaser"
fi

go run ./internal/image/cmd/flotilla-image -version "$version" \
	-layout "$out/image" -tar "$out/flotilla-image_$version.tar" \
	-crossplane "$CROSSPLANE" -xpkg "$out/flotilla-provider_$version.xpkg"

"$HELM" package deploy/helm/flotilla deploy/helm/flotilla-agent --version "$version" --app-version "$version" -d "$out/charts"
echo "$version" >"$out/VERSION"
echo "== release: done"
