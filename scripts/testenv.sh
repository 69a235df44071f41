#!/usr/bin/env bash
# Builds the pinned member-cluster binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd, kwok) into a versioned cache directory outside the repository.
# It is a no-op when every binary is already present. See ../shared/TESTENV.md for the recipe.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.35.4}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
dir=${FLOTILLA_TESTENV_DIR:-$HOME/.cache/flotilla/testenv/${K8S_VERSION}-${ETCD_VERSION}-${KWOK_VERSION}}
bins=(kube-apiserver kube-controller-manager kube-scheduler etcd kwok)

missing=()
for b in "${bins[@]}"; do [ -x "$dir/$b" ] || missing+=("$b"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "testenv: binaries present in $dir"
  exit 0
fi
mkdir -p "$dir"
echo "testenv: building ${missing[*]} into $dir (cold: about 6 minutes on an idle 2-core machine, 20-35 minutes on a busy one; each step prints its elapsed time)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS
# The checksum database has no entries for some k8s.io/kubernetes-family modules; this
# setting is confined to this throw-away tool build and never touches the project's go.mod.
export GONOSUMDB=k8s.io GOFLAGS=-mod=mod

need() { for m in "${missing[@]}"; do [ "$m" = "$1" ] && return 0; done; return 1; }

if need kube-apiserver || need kube-controller-manager || need kube-scheduler; then
  echo "testenv: [1/3] kubernetes ${K8S_VERSION} control plane"
  mkdir -p "$work/k8s" && cd "$work/k8s"
  go mod init flotilla.local/testenv-k8s >/dev/null 2>&1
  modfile=$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  staging_version="v0${K8S_VERSION#v1}"
  {
    echo "require k8s.io/kubernetes ${K8S_VERSION}"
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile" |
      while read -r m; do echo "replace $m => $m ${staging_version}"; done
  } >>go.mod
  cat >tools.go <<GO
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
  go mod tidy >/dev/null 2>&1 || go mod tidy
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  GOBIN="$dir" go install -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
  echo "testenv:       done at $((SECONDS - start))s"
fi

if need etcd; then
  echo "testenv: [2/3] etcd ${ETCD_VERSION}"
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init flotilla.local/testenv-etcd >/dev/null 2>&1
  echo "require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}" >>go.mod
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools.go
  go mod tidy >/dev/null 2>&1 || go mod tidy
  mkdir -p "$work/etcd-bin"
  GOBIN="$work/etcd-bin" go install -ldflags "-s -w" go.etcd.io/etcd/server/v3
  mv "$work/etcd-bin/server" "$dir/etcd"
  echo "testenv:       done at $((SECONDS - start))s"
fi

if need kwok; then
  echo "testenv: [3/3] kwok ${KWOK_VERSION}"
  cd "$work"
  GOFLAGS= GOBIN="$dir" go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  echo "testenv:       done at $((SECONDS - start))s"
fi

for b in "${bins[@]}"; do
  [ -x "$dir/$b" ] || { echo "testenv: $b is missing from $dir after the build" >&2; exit 1; }
done
echo "testenv: ready in $dir ($((SECONDS - start))s)"
