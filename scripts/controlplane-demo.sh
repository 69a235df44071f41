#!/usr/bin/env bash
# The continuous control plane at work, on the local one `make controlplane-up`
# started: a Deployment and a PropagationPolicy applied to the host with
# kubectl, their replicas divided over the members, then one member stopped
# (its processes, by the PIDs localup recorded) and its replicas moved to the
# others. `make controlplane-down` stops everything afterwards.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${CONTROLPLANE_DIR:-$HOME/.cache/flotilla/controlplane}
export KUBECONFIG=$dir/kubeconfig
replicas=${REPLICAS:-6}
timeout=${TIMEOUT:-120}

section() { printf '\n==> %s\n' "$*"; }
die() { printf 'controlplane-demo: %s\n' "$*" >&2; exit 1; }
host() { kubectl --context host "$@"; }

command -v kubectl >/dev/null 2>&1 || die "kubectl is not on PATH"
[ -f "$KUBECONFIG" ] || die "no local control plane in $dir: run 'make controlplane-up' first"
mapfile -t members < <(kubectl config get-contexts -o name | grep -v '^host$' | sort)
((${#members[@]} >= 2)) || die "failover needs two members or more, found ${#members[@]}: make controlplane-down && make controlplane-up N=3"

# ready prints "member=ready/replicas" for web on every member given.
ready() {
  for m in "$@"; do
    printf '%s=%s ' "$m" "$(kubectl --context "$m" get deployment web -o 'jsonpath={.status.readyReplicas}/{.spec.replicas}' 2>/dev/null || echo absent)"
  done
}

# wait_for runs its command every 2 s until it succeeds or $timeout passes.
wait_for() {
  local what=$1 start=$SECONDS
  shift
  until "$@"; do
    ((SECONDS - start < timeout)) || die "$what: not reached in ${timeout}s"
    sleep 2
  done
  echo "$what: after $((SECONDS - start))s"
}

# spread_over succeeds once web's replicas on the given members add up to
# $replicas, all Ready.
spread_over() {
  local total=0 m r
  for m in "$@"; do
    r=$(kubectl --context "$m" get deployment web -o 'jsonpath={.status.readyReplicas}' 2>/dev/null || true)
    total=$((total + ${r:-0}))
  done
  echo "  $(ready "$@")"
  ((total == replicas))
}

section "Members registered as Clusters on the host"
host get clusters.cluster.flotilla.io
if host get clusters.cluster.flotilla.io -o 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -qv True; then
  die "a member is not Ready (stopped by an earlier run?): make controlplane-down && make controlplane-up"
fi

section "A Deployment of $replicas replicas and a PropagationPolicy dividing them, applied to the host"
host apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: $replicas
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
EOF
wait_for "all $replicas replicas Ready across ${members[*]}" spread_over "${members[@]}"
host get resourcebindings.work.flotilla.io web-deployment.apps -o 'jsonpath={"  binding: "}{.spec.clusters}{"\n"}'
host get deployment web

victim=${members[-1]}
survivors=("${members[@]:0:${#members[@]}-1}")
section "Stopping member $victim: its Cluster turns NotReady, is tainted, and its replicas move"
(cd "$root" && go run ./cmd/localup stop-member -dir "$dir" "$victim")
wait_for "all $replicas replicas Ready on ${survivors[*]}" spread_over "${survivors[@]}"
host get clusters.cluster.flotilla.io
host get resourcebindings.work.flotilla.io web-deployment.apps -o 'jsonpath={"  binding: "}{.spec.clusters}{"\n"}'

section "Done"
echo "$victim stays down. 'make controlplane-down' stops everything; 'make controlplane-up' starts afresh."
