#!/usr/bin/env bash
# `make bench`: runs flotilla's benchmarks and prints ONE markdown table with
# the goals of issue 9 beside each figure, saved with machine info as
# bench/results.md. It asserts nothing: a missed goal is a figure, not a
# failure. A benchmark that errors is shown as "failed" and makes the script
# exit non-zero after the table is written.
#
#   scheduling   BenchmarkScheduleLatency (pure scheduler, no I/O)
#   distribution BenchmarkDistribution (3 loopback member apiservers)
#   terraform    scripts/bench-terraform.sh (apiserver-only members)
#
# Environment:
#   BENCH_LARGE=1         also run terraform at 20 clusters x 200 apps (slow)
#   BENCH_SCHED_SAMPLES   decisions sampled per scheduling case (default 1000)
#   BENCH_SKIP_TERRAFORM=1 leave the terraform rows out (quick runs)
#   BENCH_OUT             where to write the results (default bench/results.md)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$root/bench/results.md}
samples=${BENCH_SCHED_SAMPLES:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
status=0
rows=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 |"); }

# verdict VALUE LIMIT: "met" when VALUE <= LIMIT, else "missed".
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 <= l + 0) ? "met" : "missed" }'; }

# --- scheduling -------------------------------------------------------------
echo "== bench: scheduling latency ($samples decisions per case)" >&2
sched="$work/sched.txt"
if go test -run '^$' -bench '^BenchmarkScheduleLatency$' -benchtime="${samples}x" -count=1 \
  ./controlplane/scheduler/ >"$sched" 2>&1; then
  for strategy in Duplicated:Duplicated StaticWeightedSpread:"static-weighted + spread" DynamicWeighted:dynamic-weighted; do
    key=${strategy%%:*} label=${strategy#*:}
    for n in 10 100 1000 5000; do
      # A result line: BenchmarkScheduleLatency/clusters=N/KEY-P  200  ns/op  X p50-µs  Y p99-µs
      read -r p50 p99 < <(awk -v want="BenchmarkScheduleLatency/clusters=$n/$key" '
        { name = $1; sub(/-[0-9]+$/, "", name) }
        name == want { for (i = 2; i < NF; i++) { if ($(i+1) == "p50-µs") p50 = $i; if ($(i+1) == "p99-µs") p99 = $i } }
        END { if (p50 == "") print "? ?"; else printf "%g %g\n", p50, p99 }' "$sched")
      goal="—"
      if [ "$n" = 100 ] && [ "$p99" != "?" ]; then
        goal="p99 ≤ 500 µs: $(verdict "$p99" 500)"
      fi
      row "scheduling, $label" "$n clusters" "$p50 µs" "$p99 µs" "$goal"
    done
  done
else
  echo "bench: scheduling benchmark failed:" >&2; tail -20 "$sched" >&2
  row "scheduling" "10–5,000 clusters" "failed" "failed" "p99 ≤ 500 µs at 100 clusters"
  status=1
fi

# --- distribution -----------------------------------------------------------
echo "== bench: distribution latency (200 manifests, 3 members)" >&2
dist="$work/dist.txt"
if go test -run '^$' -bench '^BenchmarkDistribution$' -benchtime=1x -count=1 -timeout 10m \
  ./controlplane/execution/ >"$dist" 2>&1; then
  read -r p50 p99 < <(awk '
    $1 ~ /^BenchmarkDistribution/ { for (i = 2; i < NF; i++) { if ($(i+1) == "p50-ms") p50 = $i; if ($(i+1) == "p99-ms") p99 = $i } }
    END { if (p50 == "") print "? ?"; else printf "%g %g\n", p50, p99 }' "$dist")
  row "distribution, apply → stored in 3 members" "200 manifests" "$p50 ms" "$p99 ms" "p99 ≤ 150 ms: $(verdict "$p99" 150) (Karmada push p99: 1,298 ms)"
else
  echo "bench: distribution benchmark failed:" >&2; tail -20 "$dist" >&2
  row "distribution, apply → stored in 3 members" "200 manifests" "failed" "failed" "p99 ≤ 150 ms"
  status=1
fi

# --- terraform --------------------------------------------------------------
# terraform_rows CLUSTERS APPS: runs bench-terraform.sh and adds its three rows.
terraform_rows() {
  local clusters=$1 apps=$2 tsv="$work/tf-$1x$2.tsv" log="$work/tf-$1x$2.log"
  echo "== bench: terraform at $clusters clusters x $apps apps" >&2
  if ! BENCH_TF_RESULTS="$tsv" bash scripts/bench-terraform.sh "$clusters" "$apps" >"$log" 2>&1; then
    echo "bench: terraform benchmark at ${clusters}x${apps} failed:" >&2; tail -30 "$log" >&2
    row "terraform" "$clusters clusters × $apps apps" "failed" "failed" "—"
    status=1
    return
  fi
  local name wall rss goal
  while IFS=$'\t' read -r name wall rss; do
    goal="—"
    if [ "$clusters" = 10 ] && [ "$apps" = 100 ]; then
      case $name in
        plan) goal="≤ 6 s: $(verdict "$wall" 6) (hashicorp/kubernetes: 65 s)" ;;
        apply) goal="≤ 60 s: $(verdict "$wall" 60) (hashicorp/kubernetes: > 600 s)" ;;
        "no-change plan") goal="≤ 6 s: $(verdict "$wall" 6) (hashicorp/kubernetes: 194 s, 3.2 GB)" ;;
      esac
    fi
    row "terraform $name" "$clusters clusters × $apps apps" "$wall s (wall)" "$rss MB (peak RSS)" "$goal"
  done <"$tsv"
}
if [ -z "${BENCH_SKIP_TERRAFORM:-}" ]; then
  terraform_rows 10 100
  if [ -n "${BENCH_LARGE:-}" ]; then
    terraform_rows 20 200
  fi
fi

# --- report -----------------------------------------------------------------
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
tfv=$(terraform version 2>/dev/null | head -1 || echo "terraform not found")
{
  echo "# flotilla benchmark results"
  echo
  echo "Produced by \`make bench\` (scripts/bench.sh); figures, not assertions. The"
  echo "machine is shared, so compare the load averages before trusting a change."
  echo
  echo "- date: $started"
  echo "- machine: $(nproc) cores ($cpu), $mem memory, $(uname -sr)"
  echo "- go: $(go version | cut -d' ' -f3-)"
  echo "- terraform: $tfv"
  echo "- load average (1, 5, 15 min): before $load_before, after $load_after"
  echo "- scheduling: $samples decisions per case, BenchmarkScheduleLatency; distribution: 200 manifests, one round of BenchmarkDistribution"
  echo
  echo "| measure | size | p50 / wall | p99 / peak RSS | goal (issue 9) |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$work/results.md"
mkdir -p "$(dirname "$out")"
cp "$work/results.md" "$out"
cat "$out"
echo >&2
echo "bench: saved to $out" >&2
exit "$status"
