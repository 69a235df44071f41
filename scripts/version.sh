#!/usr/bin/env bash
# Prints flotilla's version: the one source the binary, the provider zips,
# the image tag, the charts' version and appVersion and the Crossplane
# package are all stamped from. It is the git tag vX.Y.Z on HEAD, without
# its v. Anywhere else it is a SemVer pre-release of the next patch after
# the last such tag (0.0.1 before the first): X.Y.(Z+1)-snapshot-<commit>,
# so a snapshot sorts after the release it follows and before the next one.
set -euo pipefail
cd "$(dirname "$0")/.."
if tag=$(git describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null); then
	echo "${tag#v}"
	exit 0
fi
last=$(git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null || echo v0.0.0)
IFS=. read -r major minor patch <<<"${last#v}"
patch=${patch%%[-+]*}
echo "${major}.${minor}.$((patch + 1))-snapshot-$(git rev-parse --short=12 HEAD)"
