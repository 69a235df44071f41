#!/usr/bin/env bash
# Measures `terraform plan`, `terraform apply` and a no-change `terraform plan`
# for a fleet of CLUSTERS real member apiservers (apiserver-only, one shared
# etcd) and APPS applications: each a Deployment with a weighted propagation
# policy and a per-cluster image override. Prints wall time and peak RSS of
# each terraform command; the provider runs as a child that terraform waits
# for, so the peak RSS is the larger of the two. Set BENCH_TF_RESULTS=FILE to also get
# tab-separated figures for scripts/bench.sh. The CPU column is user + system
# time of terraform and the provider together, which is less noisy than wall
# time on a shared machine. BENCH_TF_PROFILE=DIR writes each provider
# process' CPU profile to DIR/<step>.<pid> (go tool pprof), its heap near
# its peak to DIR/<step>.heap.<pid> and its peak RSS to
# DIR/<step>.heap.<pid>.hwm. Usage:
# scripts/bench-terraform.sh [CLUSTERS] [APPS]
set -euo pipefail
clusters=${1:-10}
apps=${2:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-fleet.sh
source "$root/scripts/bench-fleet.sh"

echo "== bench: building the provider"
(cd "$root" && go build -o "$work/bin/terraform-provider-flotilla" .)
cat >"$work/terraformrc" <<RC
provider_installation {
  dev_overrides { "registry.terraform.io/flotilla-io/flotilla" = "$work/bin" }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1

echo "== bench: starting $clusters apiserver-only members"
fleet_up "$clusters"

mkdir -p "$work/tf"
{
  echo 'terraform {'
  echo '  required_providers {'
  echo '    flotilla = { source = "flotilla-io/flotilla" }'
  echo '  }'
  echo '}'
  # Refresh reaches the members through the connections recorded in state,
  # and a recorded kubeconfig context is used only when trusted here:
  # without it every refresh read is refused with a warning, and the
  # no-change plan would measure 1,000 warnings instead of drift detection.
  printf 'provider "flotilla" {\n  fleet = "bench"\n  trusted_connection_overrides = ['
  for i in $(seq 1 "$clusters"); do printf '{ context = "member%d" }, ' "$i"; done
  printf ']\n}\n'
  for i in $(seq 1 "$clusters"); do
    echo "resource \"flotilla_cluster\" \"m$i\" {"
    echo "  name       = \"member$i\""
    echo "  region     = \"region-$(( i % 3 ))\""
    echo "  kubeconfig = { path = \"$fleet_dir/kubeconfig\", context = \"member$i\" }"
    echo "}"
  done
  printf 'locals {\n  clusters = ['
  for i in $(seq 1 "$clusters"); do printf 'flotilla_cluster.m%d, ' "$i"; done
  printf ']\n}\n'
  for a in $(seq 1 "$apps"); do
    cat <<HCL
resource "flotilla_propagation_policy" "app$a" {
  name               = "app$a"
  namespace          = "bench"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "app$a" }]
  placement = {
    replica_scheduling = {
      replica_scheduling_type = "Divided"
      weight_preference = { static_weight_list = [
        { target_cluster = { cluster_names = ["member1"] }, weight = 2 },
        { target_cluster = { exclude = ["member1"] }, weight = 1 },
      ] }
    }
  }
}
resource "flotilla_override_policy" "app$a" {
  name               = "app$a"
  namespace          = "bench"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "app$a" }]
  override_rules = [{
    target_cluster = { cluster_names = ["member2"] }
    overriders     = { image_overrider = [{ component = "Registry", operator = "replace", value = "registry.eu.example.com" }] }
  }]
}
resource "flotilla_manifest" "app$a" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "app$a", namespace = "bench" }
    spec = {
      replicas = $(( clusters * 2 ))
      selector = { matchLabels = { app = "app$a" } }
      template = {
        metadata = { labels = { app = "app$a" } }
        spec     = { containers = [{ name = "app", image = "nginx:1.27" }] }
      }
    }
  }
  clusters             = local.clusters
  propagation_policies = [flotilla_propagation_policy.app$a]
  override_policies    = [flotilla_override_policy.app$a]
  wait_for_rollout     = false # apiserver-only members run no pods
}
HCL
  done
} >"$work/tf/main.tf"

# measure NAME CMD...: runs CMD under /usr/bin/time and records wall time and peak RSS.
results=()
measure() {
  local name=$1; shift
  local log="$work/$name.time"
  local start end
  if [ -n "${BENCH_TF_PROFILE:-}" ]; then
    mkdir -p "$BENCH_TF_PROFILE"
    export FLOTILLA_CPUPROFILE="$BENCH_TF_PROFILE/${name// /-}"
    export FLOTILLA_HEAPPROFILE="$BENCH_TF_PROFILE/${name// /-}.heap"
  fi
  start=$(date +%s.%N)
  if ! /usr/bin/time -v -o "$log" "$@" >"$work/$name.out" 2>&1; then
    echo "bench: $name failed:" >&2; tail -30 "$work/$name.out" >&2; exit 1
  fi
  end=$(date +%s.%N)
  # A refresh that could not read the members measures nothing worth
  # comparing: say so rather than print a figure.
  if grep -q 'Warning: .*Cannot refresh' "$work/$name.out"; then
    echo "bench: $name could not refresh from the members:" >&2; grep -m1 -A12 'Cannot refresh' "$work/$name.out" >&2; exit 1
  fi
  local rss; rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  local cpu; cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$log")
  local wall; wall=$(echo "$end - $start" | bc)
  results+=("$(printf '| %s | %.1f s | %s s | %d MB |' "$name" "$wall" "$cpu" "$(( rss / 1024 ))")")
  # BENCH_TF_RESULTS names a file that gets one "name<TAB>seconds<TAB>MB<TAB>CPU
  # seconds" line per step, for scripts/bench.sh.
  if [ -n "${BENCH_TF_RESULTS:-}" ]; then
    printf '%s\t%.1f\t%d\t%s\n' "$name" "$wall" "$(( rss / 1024 ))" "$cpu" >>"$BENCH_TF_RESULTS"
  fi
  echo "bench: $name done"
}

cd "$work/tf"
echo "== bench: terraform at $clusters clusters x $apps apps"
measure "plan" terraform plan -refresh=true -out=plan.tfplan -parallelism=10
measure "apply" terraform apply -auto-approve -parallelism=10 plan.tfplan
# -detailed-exitcode makes a plan with changes exit 2, which measure reports
# as a failure: the follow-up plan must be empty.
measure "no-change plan" terraform plan -detailed-exitcode -parallelism=10
echo
echo "terraform, $clusters members x $apps apps ($(nproc) cores, $(terraform version | head -1)); peak RSS is the largest of terraform and the provider"
echo "| step | wall | CPU (user+sys) | peak RSS |"
echo "|---|---|---|---|"
printf '%s\n' "${results[@]}"
