#!/usr/bin/env bash
# The hashicorp/kubernetes side of the terraform comparison in `make bench`:
# the same fleet and applications as scripts/bench-terraform.sh (CLUSTERS
# apiserver-only members sharing one etcd; APPS Deployments of CLUSTERS*2
# replicas divided 2:1 between member1 and the others, member2 pulling from
# registry.eu.example.com) written for terraform-provider-kubernetes 3.2.1:
# one provider alias per cluster, a kubernetes_namespace_v1 per cluster and a
# kubernetes_deployment_v1 per app per cluster that gets replicas. The
# replicas and images per cluster come from `terraform-provider-flotilla
# preview` of the equivalent Karmada YAML, so both sides deploy the same
# objects.
#
# The provider is built once from the Go module proxy at the pinned
# pseudo-version (3.2.1) into ~/.cache/flotilla/tools/kubernetes-<version>/
# and loaded with dev_overrides; it never enters this module's go.mod.
#
# Each terraform command is capped at BENCH_KUBERNETES_TIMEOUT seconds
# (default 600): a capped step is reported as "> N", and the no-change plan
# is not run after a capped apply. Prints wall time and peak RSS (the larger
# of terraform and the provider). BENCH_TF_RESULTS=FILE also gets one
# "name<TAB>seconds<TAB>MB" line per step for scripts/bench.sh; seconds is
# ">N" for a capped step and "-" for a step not run.
# Usage: scripts/bench-kubernetes.sh [CLUSTERS] [APPS]
set -euo pipefail
clusters=${1:-10}
apps=${2:-100}
cap=${BENCH_KUBERNETES_TIMEOUT:-600}
version=v1.13.4-0.20260821094251-3a33fb6cc605 # github.com/hashicorp/terraform-provider-kubernetes 3.2.1
root=$(cd "$(dirname "$0")/.." && pwd)
provider_dir=${FLOTILLA_TOOLS_DIR:-$HOME/.cache/flotilla/tools}/kubernetes-$version
# shellcheck source=scripts/bench-fleet.sh
source "$root/scripts/bench-fleet.sh"

if [ ! -x "$provider_dir/terraform-provider-kubernetes" ]; then
  echo "== bench: building terraform-provider-kubernetes $version (3.2.1) into $provider_dir"
  # A throwaway module directory, so nothing touches this repository's go.mod.
  build="$work/build"
  mkdir -p "$build" "$provider_dir"
  (cd "$build" && GOFLAGS=-mod=mod GOBIN="$build/bin" go install \
    "github.com/hashicorp/terraform-provider-kubernetes@$version")
  mv "$build/bin/terraform-provider-kubernetes" "$provider_dir/"
fi

echo "== bench: building flotilla (for preview)"
(cd "$root" && go build -o "$work/bin/terraform-provider-flotilla" .)
cat >"$work/terraformrc" <<RC
provider_installation {
  dev_overrides { "registry.terraform.io/hashicorp/kubernetes" = "$provider_dir" }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1

# The Karmada form of bench-terraform.sh's configuration.
mkdir -p "$work/karmada"
for i in $(seq 1 "$clusters"); do
  cat <<YAML
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member$i}
spec: {region: region-$(( i % 3 ))}
status:
  conditions:
  - {type: Ready, status: "True", reason: ClusterReady, message: ready, lastTransitionTime: "2026-01-01T00:00:00Z"}
YAML
done >"$work/karmada/clusters.yaml"
for a in $(seq 1 "$apps"); do
  cat <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app$a, namespace: bench}
spec:
  replicas: $(( clusters * 2 ))
  selector: {matchLabels: {app: app$a}}
  template:
    metadata: {labels: {app: app$a}}
    spec: {containers: [{name: app, image: "nginx:1.27"}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: app$a, namespace: bench}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: app$a}]
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 2}
        - {targetCluster: {exclude: [member1]}, weight: 1}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: app$a, namespace: bench}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: app$a}]
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      imageOverrider: [{component: Registry, operator: replace, value: registry.eu.example.com}]
YAML
done >"$work/karmada/apps.yaml"
"$work/bin/terraform-provider-flotilla" preview -f "$work/karmada" -o json --fleet bench >"$work/preview.json"
# One "app<TAB>cluster<TAB>replicas<TAB>image" line per app and cluster that gets replicas.
jq -r '.results[] | select(.template.kind == "Deployment") | .template.name as $app
  | .placement[] | select(.replicas > 0)
  | [$app, .cluster, .replicas] | @tsv' "$work/preview.json" >"$work/placement.tsv"
jq -r '.results[] | select(.template.kind == "Deployment") | .template.name as $app
  | .rendered | to_entries[] | [$app, .key, .value.spec.template.spec.containers[0].image] | @tsv' \
  "$work/preview.json" >"$work/images.tsv"
if [ ! -s "$work/placement.tsv" ]; then
  echo "bench: preview placed nothing:" >&2; head -c 2000 "$work/preview.json" >&2; exit 1
fi

echo "== bench: starting $clusters apiserver-only members"
fleet_up "$clusters"

mkdir -p "$work/tf"
{
  echo 'terraform {'
  echo '  required_providers {'
  echo '    kubernetes = { source = "hashicorp/kubernetes" }'
  echo '  }'
  echo '}'
  for i in $(seq 1 "$clusters"); do
    cat <<HCL
provider "kubernetes" {
  alias          = "member$i"
  config_path    = "$fleet_dir/kubeconfig"
  config_context = "member$i"
}
resource "kubernetes_namespace_v1" "member$i" {
  provider = kubernetes.member$i
  metadata { name = "bench" }
}
HCL
  done
  # join placement with images: app cluster replicas image
  awk -F'\t' 'NR == FNR { image[$1 FS $2] = $3; next } { print $1 "\t" $2 "\t" $3 "\t" image[$1 FS $2] }' \
    "$work/images.tsv" "$work/placement.tsv" |
  while IFS=$'\t' read -r app cluster replicas image; do
    cat <<HCL
resource "kubernetes_deployment_v1" "${app}_${cluster}" {
  provider = kubernetes.$cluster
  metadata {
    name      = "$app"
    namespace = kubernetes_namespace_v1.$cluster.metadata[0].name
  }
  spec {
    replicas = $replicas
    selector { match_labels = { app = "$app" } }
    template {
      metadata { labels = { app = "$app" } }
      spec {
        container {
          name  = "app"
          image = "$image"
        }
      }
    }
  }
  wait_for_rollout = false # apiserver-only members run no pods
}
HCL
  done
} >"$work/tf/main.tf"
deployments=$(wc -l <"$work/placement.tsv")

# measure NAME CMD...: runs CMD under /usr/bin/time, capped at $cap seconds,
# and records wall time and peak RSS. Returns 1 when the cap was hit.
results=()
record() {
  results+=("| $1 | $2 | $3 |")
  if [ -n "${BENCH_TF_RESULTS:-}" ]; then
    printf '%s\t%s\t%s\n' "$1" "$4" "$5" >>"$BENCH_TF_RESULTS"
  fi
}
measure() {
  local name=$1; shift
  local log="$work/$name.time" start end rc=0
  start=$(date +%s.%N)
  # SIGINT first: terraform stops gracefully and writes its state.
  /usr/bin/time -v -o "$log" timeout --signal=INT --kill-after=60 "$cap" "$@" >"$work/$name.out" 2>&1 || rc=$?
  end=$(date +%s.%N)
  local rss; rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  local mb=$(( ${rss:-0} / 1024 ))
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    record "$name" "> $cap s" "$mb MB" ">$cap" "$mb"
    echo "bench: $name capped at $cap s"
    return 1
  fi
  if [ "$rc" != 0 ]; then
    echo "bench: $name failed (exit $rc):" >&2; tail -30 "$work/$name.out" >&2; exit 1
  fi
  local wall; wall=$(printf '%.1f' "$(echo "$end - $start" | bc)")
  record "$name" "$wall s" "$mb MB" "$wall" "$mb"
  echo "bench: $name done in $wall s"
}

cd "$work/tf"
echo "== bench: hashicorp/kubernetes at $clusters clusters x $apps apps ($deployments deployments)"
# An interrupted plan still writes a plan file, which terraform refuses to apply.
if ! measure "plan" terraform plan -refresh=true -out=plan.tfplan -parallelism=10; then
  record "apply" "not run (plan capped)" "-" "-" "-"
  record "no-change plan" "not run (plan capped)" "-" "-" "-"
elif measure "apply" terraform apply -auto-approve -parallelism=10 plan.tfplan; then
  # -detailed-exitcode: a plan with changes exits 2 and counts as a failure.
  measure "no-change plan" terraform plan -detailed-exitcode -parallelism=10 || true
else
  record "no-change plan" "not run (apply capped)" "-" "-" "-"
fi
echo
echo "hashicorp/kubernetes 3.2.1, $clusters members x $apps apps ($deployments kubernetes_deployment_v1, $clusters namespaces; $(nproc) cores, $(terraform version | head -1)); each step capped at $cap s; peak RSS is the largest of terraform and the provider"
echo "| step | wall | peak RSS |"
echo "|---|---|---|"
printf '%s\n' "${results[@]}"
