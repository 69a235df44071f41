#!/usr/bin/env bash
# `make bench`: runs flotilla's benchmarks and prints ONE markdown table with
# the goals of issue 9 beside each figure, saved with machine info as
# bench/results.md. It asserts nothing: a missed goal is a figure, not a
# failure. A benchmark that errors is shown as "failed" and makes the script
# exit non-zero after the table is written.
#
#   scheduling   BenchmarkScheduleLatency (pure scheduler, no I/O) and
#                BenchmarkIssueFleetLatency (the fleet shape of issue 23)
#   karmada      scripts/bench-karmada.sh, only when KARMADA_SRC is set: one
#                decision per strategy beside Karmada's scheduler core on one
#                JSON fixture, alternating runs, ratios per size (issue 40)
#   estimator    BenchmarkNodeEstimate (one template over a 1,000-node member)
#                and BenchmarkNodeEstimateSchedule (decisions with the
#                per-node estimator beside the general one, issue 35)
#   quota        BenchmarkQuotaStatus (a FederatedResourceQuota's status pass:
#                pure aggregation, and list + aggregate + patch on a real host)
#   interpreter  BenchmarkAggregateFleet (a customization's status
#                aggregation building one message per member, 2,000 members:
#                time and bytes allocated per call, issue 36)
#   autoscaling  BenchmarkFederatedHPADecision (one FederatedHPA decision over
#                100 members x 50 pods: the pure computation, and the bounded
#                fan-out of member reads at a simulated member latency)
#   dashboard    BenchmarkPages (the dashboard's fleet and workloads pages
#                server time, and time to interactive in headless Chromium,
#                at 200 clusters x 2,000 workloads, issue 38)
#   search       BenchmarkSearchCacheMemory (bytes kept per typical Deployment)
#                and BenchmarkSearchList (get deployments -A over 100 x 1,000
#                cached Deployments, issue 37), BenchmarkGetDeploymentsAllNamespaces
#                (what the user waits for: served handler over HTTP, the
#                plugin's decoding and printing, cache filled by its informers)
#   distribution BenchmarkDistribution (3 loopback member apiservers)
#   terraform    scripts/bench-terraform.sh (apiserver-only members)
#   kubernetes   scripts/bench-kubernetes.sh: the same fleet and apps with
#                hashicorp/kubernetes 3.2.1, side by side with terraform
#   continuous   BenchmarkContinuousScale (full resync and peak RSS of the
#                `controlplane` process) and BenchmarkContinuousFailover
#                (member apiserver stopped -> replicas ready elsewhere),
#                BenchmarkMemberStatusScale (the cluster status loop against
#                one kwok member: listing every probe vs informers) and
#                BenchmarkWorkThroughput (template change -> every real
#                member updated, per (template, member) p50/p99 and total),
#                BenchmarkMemberStatusLatency (member status change -> host
#                template status p50/p99, host writes per change)
#   mcs          BenchmarkMCSSync (issue 33: S exported Services x C
#                apiserver-only members, half exporting and half importing;
#                full sync time, host writes per endpoint change and per
#                unchanged slice update)
#   restart      BenchmarkContinuousWarmRestart, BenchmarkContinuousLeaderChange
#                and BenchmarkContinuousClusterFlap (issue 20): host writes
#                counted from the apiserver's apiserver_request_total
#
# Environment:
#   BENCH_LARGE=1         terraform also at 20 clusters x 200 apps, and the
#                         continuous resync at 1,000 clusters x 10,000
#                         templates instead of 200 x 2,000 (slow)
#   BENCH_SCHED_SAMPLES   decisions sampled per scheduling case (default 1000)
#   BENCH_SKIP_TERRAFORM=1 leave the flotilla terraform rows out (quick runs)
#   BENCH_SKIP_KUBERNETES=1 leave the hashicorp/kubernetes rows out
#   BENCH_KUBERNETES_TIMEOUT cap of each hashicorp/kubernetes command in s (default 600)
#   BENCH_SKIP_CONTINUOUS=1 leave the continuous-mode rows out
#   BENCH_SCALE=CxT       continuous resync size, e.g. 1000x10000 (overrides BENCH_LARGE)
#   BENCH_FAILOVER_RUNS   member kills measured (default 3)
#   BENCH_SKIP_MEMBER_STATUS=1 leave the member status rows out
#   BENCH_STATUS_SIZE=NxP member status: kwok nodes x pods (default 1000x10000)
#   BENCH_STATUS_ROUNDS   member status: idle/list/watch windows of 1 min each (default 1)
#   BENCH_STATUS_KWOK=0   member status: apiserver-only member with static Ready nodes
#   BENCH_SKIP_WORKPUT=1  leave the Work throughput rows out
#   BENCH_WORKPUT=MxT     Work throughput size: members x templates (default 10x1000)
#   BENCH_SKIP_STATUSWATCH=1 leave the member status latency rows out
#   BENCH_STATUSWATCH=MxT member status latency size: members x templates (default 10x100: 1,000 Works)
#   BENCH_SKIP_MCS=1      leave the multi-cluster services rows out
#   BENCH_MCS=SxC         multi-cluster services size: Services x members (default 200x10)
#   BENCH_SKIP_RESTART=1  leave the restart, leader change and flapping rows out
#   KARMADA_SRC           a Karmada source tree with vendor/: adds the rows
#                         beside Karmada's scheduler core (skipped, and said
#                         so, when unset)
#   BENCH_OUT             where to write the results (default bench/results.md)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$root/bench/results.md}
samples=${BENCH_SCHED_SAMPLES:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"

scale_clusters=200 scale_templates=2000
if [ -n "${BENCH_LARGE:-}" ]; then
  scale_clusters=1000 scale_templates=10000
fi
if [ -n "${BENCH_SCALE:-}" ]; then
  scale_clusters=${BENCH_SCALE%x*} scale_templates=${BENCH_SCALE#*x}
fi
failover_runs=${BENCH_FAILOVER_RUNS:-3}
workput=${BENCH_WORKPUT:-10x1000}
workput_members=${workput%x*} workput_templates=${workput#*x}
statuswatch=${BENCH_STATUSWATCH:-10x100}
statuswatch_members=${statuswatch%x*} statuswatch_templates=${statuswatch#*x}
mcs_size=${BENCH_MCS:-200x10}
mcs_services=${mcs_size%x*} mcs_clusters=${mcs_size#*x}
kubernetes_cap=${BENCH_KUBERNETES_TIMEOUT:-600}
export BENCH_KUBERNETES_TIMEOUT=$kubernetes_cap
notes=()

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
status=0
rows=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 |"); }

# verdict VALUE LIMIT: "met" when VALUE <= LIMIT, else "missed".
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 <= l + 0) ? "met" : "missed" }'; }

# percentiles FILE NAME UNIT prints the p50 and p99 (custom metrics p50-UNIT and p99-UNIT) of the benchmark result
# NAME (its -GOMAXPROCS suffix dropped) in FILE, or "? ?" when FILE has no such result.
percentiles() {
  awk -v want="$2" -v unit="$3" '
    { name = $1; sub(/-[0-9]+$/, "", name) }
    name == want { for (i = 2; i < NF; i++) { if ($(i+1) == "p50-" unit) p50 = $i; if ($(i+1) == "p99-" unit) p99 = $i } }
    END { if (p50 == "") print "? ?"; else printf "%g %g\n", p50, p99 }' "$1"
}

# --- scheduling -------------------------------------------------------------
echo "== bench: scheduling latency ($samples decisions per case)" >&2
sched="$work/sched.txt"
if go test -run '^$' -bench '^BenchmarkScheduleLatency$' -benchtime="${samples}x" -count=1 \
  ./controlplane/scheduler/ >"$sched" 2>&1; then
  for strategy in Duplicated:Duplicated StaticWeightedSpread:"static-weighted + spread" DynamicWeighted:dynamic-weighted; do
    key=${strategy%%:*} label=${strategy#*:}
    for n in 10 100 1000 5000; do
      # A result line: BenchmarkScheduleLatency/clusters=N/KEY-P  200  ns/op  X p50-µs  Y p99-µs
      read -r p50 p99 < <(percentiles "$sched" "BenchmarkScheduleLatency/clusters=$n/$key" µs)
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

# --- scheduling, the issue 23 fleet shape -----------------------------------
# BenchmarkIssueFleetLatency: five strategies on the fleet of issue 23 (5 regions, 2 providers, a label on 90%,
# taints, a missing API, varied capacity). "shared" is one Snapshot for every decision (the control plane while
# the fleet is unchanged), "fresh" builds it for each decision (a single plan).
echo "== bench: scheduling latency, issue 23 fleet ($samples decisions per case)" >&2
fleet_sched="$work/sched-fleet.txt"
if go test -run '^$' -bench '^BenchmarkIssueFleetLatency$' -benchtime="${samples}x" -count=1 -timeout 20m \
  ./controlplane/scheduler/ >"$fleet_sched" 2>&1; then
  for key in Duplicated StaticWeightedSpread DynamicWeighted Aggregated DynamicWeightedSpread; do
    for n in 10 100 1000 5000; do
      read -r p50 p99 fp50 fp99 < <(awk -v shared="BenchmarkIssueFleetLatency/clusters=$n/$key/shared" \
        -v fresh="BenchmarkIssueFleetLatency/clusters=$n/$key/fresh" '
        { name = $1; sub(/-[0-9]+$/, "", name); a = ""; b = "" }
        { for (i = 2; i < NF; i++) { if ($(i+1) == "p50-µs") a = $i; if ($(i+1) == "p99-µs") b = $i } }
        name == shared { p50 = a; p99 = b }
        name == fresh { fp50 = a; fp99 = b }
        END { if (p50 == "" || fp50 == "") print "? ? ? ?"; else printf "%g %g %g %g\n", p50, p99, fp50, fp99 }' "$fleet_sched")
      goal="—"
      case $n in
        100) goal="p99 ≤ 60 µs: $(verdict "$p99" 60)" ;;
        5000) goal="p99 ≤ 4,000 µs: $(verdict "$p99" 4000)" ;;
      esac
      row "scheduling, issue 23 fleet, $key" "$n clusters" "$p50 µs (fresh snapshot: $fp50)" "$p99 µs (fresh: $fp99)" "$goal"
    done
  done
else
  echo "bench: issue 23 fleet scheduling benchmark failed:" >&2; tail -20 "$fleet_sched" >&2
  row "scheduling, issue 23 fleet" "10–5,000 clusters" "failed" "failed" "p99 ≤ 4 ms at 5,000 clusters"
  status=1
fi

# --- scheduling beside Karmada (issue 40) --------------------------------------
# scripts/bench-karmada.sh: Karmada's generic scheduler and flotilla's on one JSON fixture, alternating runs;
# only with KARMADA_SRC (a Karmada source tree with vendor/), which a fresh machine does not have.
if [ -n "${KARMADA_SRC:-}" ]; then
  echo "== bench: scheduling beside Karmada's scheduler core ($KARMADA_SRC)" >&2
  karmada_tsv="$work/karmada.tsv"
  if BENCH_KARMADA_TSV="$karmada_tsv" bash scripts/bench-karmada.sh "$KARMADA_SRC" >"$work/karmada.md" 2>"$work/karmada.log"; then
    while read -r n s kw kc sw sc fw fc hw hc same; do
      ratio=$(awk -v k="$kc" -v f="$sc" 'BEGIN { printf "%.0f", (f > 0) ? k / f : 0 }')
      row "scheduling beside Karmada, $s, one decision without a Snapshot" "$n clusters" \
        "$(awk -v f="$sc" 'BEGIN { printf "%.0f", f / 1e3 }') µs CPU (Karmada $(awk -v k="$kc" 'BEGIN { printf "%.1f", k / 1e6 }') ms)" \
        "${ratio}× by CPU ($(awk -v k="$kw" -v f="$sw" 'BEGIN { printf "%.0f", (f > 0) ? k / f : 0 }')× wall; shared Snapshot $(awk -v k="$kc" -v f="$hc" 'BEGIN { printf "%.0f", (f > 0) ? k / f : 0 }')×); decision: $same" \
        "≥ 20×: $(verdict 20 "$ratio")"
    done <"$karmada_tsv"
    notes+=("- scheduling beside Karmada: scripts/bench-karmada.sh with KARMADA_SRC=$KARMADA_SRC; $(head -1 "$work/karmada.md")")
  else
    echo "bench: scheduling beside Karmada failed:" >&2; tail -20 "$work/karmada.log" >&2
    row "scheduling beside Karmada" "100–5,000 clusters" "failed" "failed" "≥ 20× on one decision without a Snapshot"
    status=1
  fi
else
  echo "bench: scheduling beside Karmada skipped: set KARMADA_SRC to a Karmada source tree with vendor/ (scripts/bench-karmada.sh)" >&2
  notes+=("- scheduling beside Karmada: not run; set KARMADA_SRC to a Karmada source tree with vendor/ to measure it (scripts/bench-karmada.sh).")
fi

# --- per-node estimator (issue 35) --------------------------------------------
# BenchmarkNodeEstimate: one template over a 1,000-node member: a shape never estimated (every node walked)
# and after a pod change on one node (that node refitted).
# BenchmarkNodeEstimateSchedule: dynamic-weight decisions with the general estimator alone and with the
# per-node one over ten nodes per cluster, after a change to every member and from the members' memo.
echo "== bench: per-node estimator ($samples estimates per case)" >&2
nodes_bench="$work/nodes.txt"
if go test -run '^$' -bench '^(BenchmarkNodeEstimate|BenchmarkNodeEstimateSchedule)$' -benchtime="${samples}x" -count=1 \
  ./controlplane/estimator/ ./controlplane/scheduler/ >"$nodes_bench" 2>&1; then
  # pct NAME: "p50 p99" of a result line, "? ?" when missing.
  pct() {
    percentiles "$nodes_bench" "$1" µs
  }
  for claim in requests selector affinity+tolerations; do
    for mode in cold after-change; do
      read -r p50 p99 < <(pct "BenchmarkNodeEstimate/nodes=1000/$claim/$mode")
      row "per-node estimate, $claim, $mode" "1,000 nodes" "$p50 µs" "$p99 µs" "p50 ≤ 1,000 µs: $(verdict "$p50" 1000)"
    done
  done
  for n in 100 1000; do
    read -r g50 g99 < <(pct "BenchmarkNodeEstimateSchedule/clusters=$n/general")
    for mode in per-node per-node-memo; do
      read -r p50 p99 < <(pct "BenchmarkNodeEstimateSchedule/clusters=$n/$mode")
      goal="—"
      if [ "$g50" != "?" ] && [ "$p50" != "?" ]; then
        goal="p50 ≤ 2 × general ($g50 µs): $(verdict "$p50" "$(awk -v g="$g50" 'BEGIN { print 2 * g }')")"
      fi
      row "scheduling, dynamic-weighted, $mode (10 nodes per cluster)" "$n clusters" "$p50 µs" "$p99 µs" "$goal"
    done
  done
else
  echo "bench: per-node estimator benchmark failed:" >&2; tail -20 "$nodes_bench" >&2
  row "per-node estimator" "1,000 nodes; 100–1,000 clusters" "failed" "failed" "p50 ≤ 1 ms; ≤ 2 × general"
  status=1
fi

# --- FederatedResourceQuota status (issue 39) ----------------------------------
# BenchmarkQuotaStatus: one quota's status over 500 bindings and 20 assigned clusters; "aggregate" is the pure
# sum and the members' ResourceQuota statuses, "write" adds the controller's cached list and the status patch
# on a real host apiserver.
echo "== bench: FederatedResourceQuota status (200 passes per case)" >&2
quota_bench="$work/quota.txt"
if go test -run '^$' -bench '^BenchmarkQuotaStatus$' -benchtime=200x -count=1 -timeout 10m \
  ./controlplane/controller/federatedquota/ >"$quota_bench" 2>&1; then
  for mode in aggregate write; do
    read -r p50 p99 < <(percentiles "$quota_bench" "BenchmarkQuotaStatus/bindings=500/clusters=20/$mode" µs)
    row "FederatedResourceQuota status, $mode" "500 bindings, 20 clusters" "$p50 µs" "$p99 µs" "—"
  done
else
  echo "bench: FederatedResourceQuota status benchmark failed:" >&2; tail -20 "$quota_bench" >&2
  row "FederatedResourceQuota status" "500 bindings, 20 clusters" "failed" "failed" "—"
  status=1
fi

# --- customization status aggregation at fleet scale (issue 36) ---------------
# BenchmarkAggregateFleet: one call of a Lua statusAggregation that appends each member's condition messages to
# the messages so far (its strings grow as the square of the members) over 2,000 members, within the budget its
# input sizes; ns/op and B/op are the mean per call.
echo "== bench: customization status aggregation, 2,000 members (5 calls)" >&2
agg_bench="$work/aggregate.txt"
if go test -run '^$' -bench '^BenchmarkAggregateFleet$' -benchtime=5x -benchmem -count=1 -timeout 10m \
  ./controlplane/interpret/ >"$agg_bench" 2>&1; then
  read -r ms mib < <(awk '
    { name = $1; sub(/-[0-9]+$/, "", name) }
    name == "BenchmarkAggregateFleet" { for (i = 2; i < NF; i++) { if ($(i+1) == "ns/op") ns = $i; if ($(i+1) == "B/op") b = $i } }
    END { if (ns == "") print "? ?"; else printf "%.0f %.0f\n", ns / 1e6, b / 1048576 }' "$agg_bench")
  row "customization status aggregation, message per member" "2,000 members" "$ms ms per call" "$mib MiB allocated per call" "passes within its budget"
else
  echo "bench: customization status aggregation benchmark failed:" >&2; tail -20 "$agg_bench" >&2
  row "customization status aggregation, message per member" "2,000 members" "failed" "failed" "passes within its budget"
  status=1
fi

# --- FederatedHPA decision (issue 34) -----------------------------------------
# BenchmarkFederatedHPADecision: one decision over 100 members x 50 pods. "compute" is the pure merge of the
# members' pod metrics and the replica computation; "fanout" reads 100 members through the bounded fan-out (32 at
# once), each read standing in for 20 ms of member round trips (100 real member apiservers are too heavy here),
# so its figure is about ceil(100/32) x 20 ms plus scheduling.
echo "== bench: FederatedHPA decision (200 decisions per case)" >&2
fhpa_bench="$work/fhpa.txt"
if go test -run '^$' -bench '^BenchmarkFederatedHPADecision$' -benchtime=200x -count=1 -timeout 10m \
  ./controlplane/controller/federatedhpa/ >"$fhpa_bench" 2>&1; then
  for c in "members=100/pods=50/compute:compute (merge + replicas), pure" "members=100/fanout:member reads fan-out, 32 at once, 20 ms per member"; do
    key=${c%%:*} label=${c#*:}
    read -r p50 p99 < <(percentiles "$fhpa_bench" "BenchmarkFederatedHPADecision/$key" µs)
    row "FederatedHPA decision, $label" "100 members x 50 pods" "$p50 µs" "$p99 µs" "—"
  done
else
  echo "bench: FederatedHPA decision benchmark failed:" >&2; tail -20 "$fhpa_bench" >&2
  row "FederatedHPA decision" "100 members x 50 pods" "failed" "failed" "—"
  status=1
fi

# --- dashboard pages (issue 38) ------------------------------------------------
# BenchmarkPages: the dashboard's server time for the fleet page and the first workloads page at 200 clusters
# and 2,000 workloads, read from an informer cache of a real host apiserver that also answers the access reviews
# (cached); each sample is one request through the whole handler.
echo "== bench: dashboard pages (200 requests per page, 200 page loads in Chromium)" >&2
dash_bench="$work/dashboard.txt"
if go test -run '^$' -bench '^BenchmarkPages$' -benchtime=200x -count=1 -timeout 15m \
  ./controlplane/dashboard/ >"$dash_bench" 2>&1; then
  for pg in fleet workloads; do
    read -r p50 p99 < <(percentiles "$dash_bench" "BenchmarkPages/clusters=200/workloads=2000/page=$pg" ms)
    goal="—"
    if [ "$pg" = fleet ] && [ "$p50" != "?" ]; then
      goal="p50 ≤ 100 ms: $(verdict "$p50" 100)"
    fi
    row "dashboard, $pg page (server time)" "200 clusters, 2,000 workloads" "$p50 ms" "$p99 ms" "$goal"
  done
  # The interactive= cases: headless Chromium, navigation to domContentLoadedEventEnd.
  for pg in fleet workloads; do
    read -r p50 p99 < <(percentiles "$dash_bench" "BenchmarkPages/clusters=200/workloads=2000/interactive=$pg" ms)
    goal="—"
    if [ "$pg" = fleet ] && [ "$p50" != "?" ]; then
      goal="interactive ≤ 1,000 ms: $(verdict "$p50" 1000)"
    fi
    row "dashboard, $pg page (interactive in Chromium)" "200 clusters, 2,000 workloads" "$p50 ms" "$p99 ms" "$goal"
  done
else
  echo "bench: dashboard benchmark failed:" >&2; tail -20 "$dash_bench" >&2
  row "dashboard pages" "200 clusters, 2,000 workloads" "failed" "failed" "p50 ≤ 100 ms (fleet page)"
  status=1
fi

# --- search cache (issue 37) ---------------------------------------------------
# BenchmarkSearchCacheMemory: what the search cache keeps per typical Deployment (its JSON with managed fields
# dropped), beside the decoded object. BenchmarkSearchList: `get deployments -A` through the cache's handler over
# 100 clusters x 1,000 Deployments (objects put straight into the informer stores), as a user who may list
# everywhere and as a tenant of one namespace in ten; server time to the last byte.
echo "== bench: search cache (memory per object; list of 100 clusters x 1,000 Deployments, 20 requests)" >&2
search_bench="$work/search.txt"
if go test -run '^$' -bench '^BenchmarkSearchCacheMemory$' -benchtime=1x -count=1 -timeout 15m ./controlplane/fleetview/ >"$search_bench" 2>&1 &&
  go test -run '^$' -bench '^BenchmarkSearchList$' -benchtime=20x -count=1 -timeout 20m ./controlplane/fleetview/ >>"$search_bench" 2>&1; then
  read -r kept decoded < <(awk '$1 ~ /^BenchmarkSearchCacheMemory/ { for (i = 3; i <= NF; i++) { if ($i == "bytes/object") k = $(i-1); if ($i == "unstructured-bytes/object") d = $(i-1) } }
    END { if (k == "") print "? ?"; else printf "%d %d\n", k, d }' "$search_bench")
  row "search cache memory per Deployment" "typical Deployment, managed fields dropped" "$kept B" "—" "decoded: $decoded B"
  for who in admin tenant; do
    read -r p50 p99 < <(percentiles "$search_bench" "BenchmarkSearchList/user=$who" ms)
    row "search cache, get deployments -A ($who), server time" "100 clusters x 1,000 Deployments" "$p50 ms" "$p99 ms" "—"
  done
else
  echo "bench: search cache benchmark failed:" >&2; tail -20 "$search_bench" >&2
  row "search cache" "100 clusters x 1,000 Deployments" "failed" "failed" "—"
  status=1
fi
# BenchmarkGetDeploymentsAllNamespaces: `kubectl flotilla get deployments -A --source=cache` as the user waits for
# it: the request over HTTP to the cache's served handler, the Table it encodes, the plugin's decoding and its
# printing; the cache filled by its own informers listing 100 members over HTTP. The issue's goal is on this row.
echo "== bench: kubectl flotilla get deployments -A, end to end (100 clusters x 1,000 Deployments, 10 calls)" >&2
get_bench="$work/get.txt"
if go test -run '^$' -bench '^BenchmarkGetDeploymentsAllNamespaces$' -benchtime=10x -count=1 -timeout 60m ./provider/cli/ >"$get_bench" 2>&1; then
  read -r p50 p99 < <(percentiles "$get_bench" BenchmarkGetDeploymentsAllNamespaces ms)
  kept=$(awk '$1 ~ /^BenchmarkGetDeploymentsAllNamespaces/ { for (i = 3; i <= NF; i++) if ($i == "cache-bytes/object") print $(i-1) }' "$get_bench")
  row "kubectl flotilla get deployments -A (cache → table → plugin printed)" "100 clusters x 1,000 Deployments" "$p50 ms" "$p99 ms" \
    "p50 ≤ 200 ms: $(verdict "$p50" 200); cache $(printf '%.0f' "${kept:-0}") B/object (live heap, informers included)"
else
  echo "bench: get deployments benchmark failed:" >&2; tail -20 "$get_bench" >&2
  row "kubectl flotilla get deployments -A" "100 clusters x 1,000 Deployments" "failed" "failed" "p50 ≤ 200 ms"
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
  local name wall rss cpu goal
  while IFS=$'\t' read -r name wall rss cpu; do
    goal="—"
    if [ "$clusters" = 10 ] && [ "$apps" = 100 ]; then
      case $name in
        plan) goal="≤ 6 s: $(verdict "$wall" 6) (hashicorp/kubernetes: 65 s)" ;;
        apply) goal="≤ 60 s: $(verdict "$wall" 60) (hashicorp/kubernetes: > 600 s)" ;;
        "no-change plan") goal="≤ 6 s: $(verdict "$wall" 6) (hashicorp/kubernetes: 194 s, 3.2 GB)" ;;
      esac
    fi
    step_row "$name" "terraform $name" "$clusters clusters × $apps apps" "$wall s (wall; CPU $cpu s)" "$rss MB (peak RSS)" "$goal"
  done <"$tsv"
}

# step_row STEP CELLS...: a terraform row. While pairing is set, rows are held
# per step so that flotilla's and hashicorp/kubernetes' figures for the same
# step end up next to each other; flush_steps writes them.
pairing=
declare -A held=()
step_row() {
  local step=$1; shift
  if [ -z "$pairing" ]; then row "$@"; return; fi
  held[$step]+="| $1 | $2 | $3 | $4 | $5 |"$'\n'
}
flush_steps() {
  local step line
  for step in plan apply "no-change plan"; do
    while IFS= read -r line; do
      [ -n "$line" ] && rows+=("$line")
    done <<<"${held[$step]:-}"
  done
  held=() pairing=
}
# kubernetes_rows CLUSTERS APPS: runs bench-kubernetes.sh (hashicorp/kubernetes
# on the same fleet and apps) and adds its three rows.
kubernetes_rows() {
  local clusters=$1 apps=$2 tsv="$work/k8s-$1x$2.tsv" log="$work/k8s-$1x$2.log"
  echo "== bench: hashicorp/kubernetes at $clusters clusters x $apps apps (each step capped at $kubernetes_cap s)" >&2
  if ! BENCH_TF_RESULTS="$tsv" bash scripts/bench-kubernetes.sh "$clusters" "$apps" >"$log" 2>&1; then
    echo "bench: hashicorp/kubernetes benchmark at ${clusters}x${apps} failed:" >&2; tail -30 "$log" >&2
    row "hashicorp/kubernetes 3.2.1" "$clusters clusters × $apps apps" "failed" "failed" "—"
    status=1
    return
  fi
  local name wall rss goal shown
  while IFS=$'\t' read -r name wall rss _; do
    case $name in
      plan) goal="comparison (issue 9 measured 65 s)" ;;
      apply) goal="comparison (issue 9 measured > 600 s)" ;;
      *) goal="comparison (issue 9 measured 194 s, 3.2 GB)" ;;
    esac
    case $wall in
      ">"*) shown="> ${wall#>} s (wall, capped)" ;;
      -) shown="not run" ;;
      *) shown="$wall s (wall)" ;;
    esac
    if [ "$rss" = - ]; then rss="—"; else rss="$rss MB (peak RSS)"; fi
    step_row "$name" "hashicorp/kubernetes 3.2.1 $name" "$clusters clusters × $apps apps" "$shown" "$rss" "$goal"
  done <"$tsv"
}
pairing=1
if [ -z "${BENCH_SKIP_TERRAFORM:-}" ]; then
  notes+=("- terraform (flotilla): apiserver-only members sharing one etcd, one Deployment per app with its own weighted propagation policy and image override policy (scripts/bench-terraform.sh), \`-parallelism=10\`. CPU is user + system time of terraform and the provider together: on a shared machine it moves less than wall time, so compare it across runs. The members' apiservers run on the same machine and are not in it.")
  terraform_rows 10 100
fi
if [ -z "${BENCH_SKIP_KUBERNETES:-}" ]; then
  kubernetes_rows 10 100
fi
flush_steps
if [ -z "${BENCH_SKIP_KUBERNETES:-}" ]; then
  notes+=("- hashicorp/kubernetes: terraform-provider-kubernetes 3.2.1 (\`v1.13.4-0.20260821094251-3a33fb6cc605\` from the Go module proxy, built into ~/.cache/flotilla/tools, loaded with dev_overrides), one provider alias per member, a \`kubernetes_namespace_v1\` per member and a \`kubernetes_deployment_v1\` per app per member that gets replicas, with the replicas and images flotilla's preview computes for the same policies; \`wait_for_rollout = false\`. Each command is capped at $kubernetes_cap s; the no-change plan is not run after a capped apply.")
fi
if [ -z "${BENCH_SKIP_TERRAFORM:-}" ] && [ -n "${BENCH_LARGE:-}" ]; then
  terraform_rows 20 200
fi

# --- terraform with one member down (issue 40, item 4) --------------------------
# TestDownMemberProbedOncePerProcess logs the median of FLOTILLA_DOWN_RUNS runs
# of each command as "LABEL: median 1.02s of 3 (…), at most N connections to m2".
down_rows() {
  local log="$work/tf-down.log"
  echo "== bench: terraform with one member of three down" >&2
  if ! TF_ACC=1 FLOTILLA_DOWN_RUNS=3 go test -run '^TestDownMemberProbedOncePerProcess$' -count=1 -v -timeout 30m \
    ./provider/terraform/ >"$log" 2>&1; then
    echo "bench: terraform with a member down failed:" >&2; tail -30 "$log" >&2
    row "terraform, one member down" "3 clusters × 8 manifests" "failed" "failed" "—"
    status=1
    return
  fi
  # median LABEL: the median in seconds; conns LABEL: the connections to the member.
  median() { awk -v l="$1: median " 'index($0, l) { s = substr($0, index($0, l) + length(l)); split(s, a, " "); d = a[1]
    if (d ~ /ms$/) { sub(/ms$/, "", d); d /= 1000 } else if (d ~ /m[0-9.]+s$/) { split(d, b, "m"); sub(/s$/, "", b[2]); d = b[1] * 60 + b[2] } else sub(/s$/, "", d)
    printf "%.2f", d }' "$log"; }
  conns() { awk -v l="$1: median " 'index($0, l) { n = $0; sub(/.*at most /, "", n); sub(/ .*/, "", n); print n }' "$log"; }
  local cmd how label up t limit
  for cmd in plan apply; do
    up=$(median "$cmd, every member up")
    limit=$(awk -v u="$up" 'BEGIN { a = 2 * u; b = u + 5; printf "%.2f", (a > b) ? a : b }')
    for how in "closing connections" "never answering"; do
      label="$cmd, m2 $how"
      t=$(median "$label")
      row "terraform $cmd, 1 of 3 members $how" "3 clusters × 8 manifests" "$t s (every member up: $up s)" \
        "$(conns "$label") connections to it" "≤ 2 × or + 5 s of every member up: $(verdict "$t" "$limit")"
    done
  done
}
if [ -z "${BENCH_SKIP_TERRAFORM:-}" ]; then
  notes+=("- terraform, one member down: TestDownMemberProbedOncePerProcess with FLOTILLA_DOWN_RUNS=3 (medians of 3): three apiserver-only members, eight ConfigMap manifests, one member behind a TCP gate that closes every connection (a stopped apiserver behind a load balancer) or never answers (frozen); the connections are the most one command opened to it. An apply is two provider processes (its plan and its apply), each probing once.")
  down_rows
fi

# --- continuous mode ----------------------------------------------------------
# The benchmarks run the `controlplane` subcommand of this binary as a process.
bench_bin="$work/bin/terraform-provider-flotilla"
if [ -z "${BENCH_SKIP_CONTINUOUS:-}" ]; then
  go build -o "$bench_bin" .
  # metric NAME FILE: the value printed before NAME on the benchmark line.
  metric() { awk -v m="$1" '$1 ~ /^Benchmark/ { for (i = 3; i <= NF; i++) if ($i == m) v = $(i-1) } END { print (v == "") ? "?" : v }' "$2"; }
  # bench_run FILE PKG NAME [VAR=value ...]: runs the Go benchmark NAME of PKG once, with the environment given,
  # into FILE; when it fails it shows the end of FILE, marks the run failed and returns 1.
  bench_run() {
    local file=$1 pkg=$2 name=$3
    shift 3
    env "$@" go test -run '^$' -bench "^$name\$" -benchtime=1x -count=1 -timeout 120m "$pkg" >"$file" 2>&1 && return 0
    echo "bench: $name failed:" >&2; tail -30 "$file" >&2
    status=1
    return 1
  }

  echo "== bench: continuous full resync ($scale_clusters clusters x $scale_templates templates)" >&2
  scale="$work/scale.txt"
  if FLOTILLA_BENCH_BINARY="$bench_bin" FLOTILLA_BENCH_CLUSTERS=$scale_clusters FLOTILLA_BENCH_TEMPLATES=$scale_templates FLOTILLA_BENCH_TIMEOUT=110m \
    go test -run '^$' -bench '^BenchmarkContinuousScale$' -benchtime=1x -count=1 -timeout 120m \
    ./controlplane/controller/e2e/ >"$scale" 2>&1; then
    resync=$(metric resync-s "$scale") peak=$(metric peak-rss-MB "$scale") setup=$(metric setup-s "$scale") works=$(metric works "$scale")
    row "continuous full resync: process start → every binding scheduled" "$scale_clusters clusters × $scale_templates templates" \
      "$(printf '%.1f' "$resync") s (wall)" "$(printf '%.0f' "$peak") MB (peak RSS)" \
      "RSS ≤ 1 GB: $(verdict "$peak" 1024) (Karmada #4738: > 1 GB for 2,000 Deployments)"
    notes+=("- continuous resync: $scale_clusters Cluster objects whose status the harness writes (Ready, CompleteAPIEnablements, 10 nodes, resource summary) and no member behind them, $scale_templates Deployments in 5 namespaces, one PropagationPolicy per namespace (dynamic weights over 2 regions, static weights 2:1 between 2 regions, Duplicated to 3 named clusters, region+cluster spread, dynamic weights over all clusters), all in an apiserver-only host. Created in parallel by the harness in $(printf '%.0f' "$setup") s, before the control plane starts. The figure is the time from starting the \`controlplane\` process (CRD check, cache sync, bindings created and scheduled) until every template's binding is Scheduled for its generation with spec.clusters set; execution cannot reach members that do not exist, so it stops there. Flags: defaults (--kube-api-qps=400, --kube-api-burst=600 since issue 20) plus --cluster-failure-threshold=24h, because a Cluster without credentials fails its probe at once and would otherwise turn NotReady after 30 s. Peak RSS is VmHWM of that process after 60 s more, in which the binding and execution controllers keep writing Works ($(printf '%.0f' "$works") at the end) and retrying unreachable members.")
  else
    echo "bench: continuous resync benchmark failed:" >&2; tail -30 "$scale" >&2
    row "continuous full resync" "$scale_clusters clusters × $scale_templates templates" "failed" "failed" "RSS ≤ 1 GB"
    status=1
  fi

  echo "== bench: continuous failover ($failover_runs runs, 3 full members)" >&2
  failover="$work/failover.txt"
  if FLOTILLA_BENCH_BINARY="$bench_bin" FLOTILLA_BENCH_FAILOVER_RUNS=$failover_runs \
    go test -run '^$' -bench '^BenchmarkContinuousFailover$' -benchtime=1x -count=1 -timeout 30m \
    ./controlplane/controller/e2e/ >"$failover" 2>&1; then
    p50=$(metric failover-p50-s "$failover") max=$(metric failover-max-s "$failover")
    runs=$(awk '$1 ~ /^BenchmarkContinuousFailover/ { for (i = 3; i <= NF; i++) if ($i ~ /^failover-run[0-9]+-s$/) { n = $i; gsub(/[^0-9]/, "", n); n += 0; v[n] = $(i-1); if (n > max) max = n } }
      END { for (k = 1; k <= max; k++) printf "%s%.1f", (k > 1 ? ", " : ""), v[k] }' "$failover")
    row "continuous failover: member apiserver stopped → replicas ready elsewhere" "3 members, 6 replicas, $failover_runs runs" \
      "$(printf '%.1f' "$p50") s (p50)" "$(printf '%.1f' "$max") s (max; runs: $runs)" \
      "≤ 30 s: $(verdict "$p50" 30) (probe 2 s, failure threshold 10 s, NoExecute after 10 s)"
    notes+=("- continuous failover: a host apiserver and 3 full members (kube-controller-manager, kube-scheduler and kwok run the pods), a Deployment of 6 replicas divided 2/2/2; each run stops one member's kube-apiserver and measures until readyReplicas on the two others sum to 6 (a fresh Deployment and the next member each run; the stopped member is restarted and Ready again in between). Flags: --cluster-probe-interval=2s --cluster-failure-threshold=10s --cluster-success-threshold=10s --no-execute-after=10s. Why these: failover can be no faster than the failure threshold plus the NoExecute delay, so a 30 s goal needs their sum well under 30 s. Karmada's defaults (probe 10 s, failure threshold 30 s, failover eviction after 5 min) would measure about 5.5 min by design. 10 s + 10 s still needs 20 s of continuous probe failure before anything moves, longer than an apiserver restart, so one lost probe or a restart moves nothing. A probe every 2 s is one GET /readyz per member. Expected: about 20 s of waiting plus detection (≤ 2 s), rescheduling, apply and pod start.")
  else
    echo "bench: continuous failover benchmark failed:" >&2; tail -30 "$failover" >&2
    row "continuous failover" "3 members" "failed" "failed" "≤ 30 s"
    status=1
  fi

  if [ -z "${BENCH_SKIP_MEMBER_STATUS:-}" ]; then
    status_size=${BENCH_STATUS_SIZE:-1000x10000} status_rounds=${BENCH_STATUS_ROUNDS:-1}
    status_nodes=${status_size%x*} status_pods=${status_size#*x}
    echo "== bench: member status loop ($status_nodes nodes x $status_pods pods, $status_rounds round(s))" >&2
    memstat="$work/member-status.txt"
    if bench_run "$memstat" ./controlplane/member/ BenchmarkMemberStatusScale FLOTILLA_BENCH_STATUS_KWOK="${BENCH_STATUS_KWOK:-1}" \
      FLOTILLA_BENCH_STATUS_NODES="$status_nodes" FLOTILLA_BENCH_STATUS_PODS="$status_pods" FLOTILLA_BENCH_STATUS_ROUNDS="$status_rounds" \
      FLOTILLA_BENCH_STATUS_WINDOW=1m; then
      m() { printf '%.2f' "$(metric "$1" "$memstat")"; }
      row "member status loop: member kube-apiserver CPU per minute (probe every 10 s)" "1 member, $status_nodes nodes × $status_pods pods" \
        "watch $(m watch-apiserver-cpu-s/min) s (list every probe: $(m list-apiserver-cpu-s/min); idle: $(m idle-apiserver-cpu-s/min))" \
        "RSS watch $(printf '%.0f' "$(metric watch-apiserver-rss-MB "$memstat")") MB (list: $(printf '%.0f' "$(metric list-apiserver-rss-MB "$memstat")"))" \
        "watch below list: $(verdict "$(metric watch-apiserver-cpu-s/min "$memstat")" "$(metric list-apiserver-cpu-s/min "$memstat")")"
      row "member status loop: flotilla CPU and memory per minute" "1 member, $status_nodes nodes × $status_pods pods" \
        "watch $(m watch-flotilla-cpu-s/min) CPU s (list: $(m list-flotilla-cpu-s/min)); allocated watch $(m watch-flotilla-alloc-MB/min) MB (list: $(m list-flotilla-alloc-MB/min))" \
        "heap kept watch $(m watch-flotilla-heap-MB) MB (list: $(m list-flotilla-heap-MB)); collect p50 watch $(m watch-collect-p50-ms) ms (list: $(m list-collect-p50-ms))" \
        "—"
      notes+=("- member status loop: one Full member (kwok nodes, pods bound round robin and Running), CollectStatus every 10 s with a 5 s timeout for 1 min per mode, modes in turns: idle (no loop), list (a cache without Watch: the code path before informers, discovery and paged lists every probe), watch (the control plane's cache: informers started before the window, discovery kept). apiserver CPU is utime + stime from /proc; flotilla CPU is the benchmark process's rusage, allocated is Go's TotalAlloc, heap kept is the live heap after GC minus before the mode. Medians over $status_rounds round(s); see bench/results-member-status.md.")
    else
      row "member status loop" "1 member, $status_nodes nodes × $status_pods pods" "failed" "failed" "—"
    fi
  fi

  if [ -z "${BENCH_SKIP_WORKPUT:-}" ]; then
    echo "== bench: Work throughput ($workput_members members x $workput_templates templates)" >&2
    wp="$work/workput.txt"
    if bench_run "$wp" ./controlplane/controller/e2e/ BenchmarkWorkThroughput FLOTILLA_BENCH_BINARY="$bench_bin" \
      FLOTILLA_BENCH_WORKPUT_MEMBERS="$workput_members" FLOTILLA_BENCH_WORKPUT_TEMPLATES="$workput_templates"; then
      p50=$(metric update-p50-s "$wp") p99=$(metric update-p99-s "$wp") total=$(metric update-total-s "$wp") initial=$(metric initial-s "$wp")
      row "continuous Work throughput: template change → member updated, per (template, member)" "$workput_members members × $workput_templates templates" \
        "$(printf '%.1f' "$p50") s (p50)" "$(printf '%.1f' "$p99") s (p99; all updated after $(printf '%.1f' "$total") s)" "— (issue 20 asks for the figures)"
      notes+=("- continuous Work throughput: a host and $workput_members apiserver-only members, $workput_templates ConfigMaps Duplicated to every member by one PropagationPolicy ($((workput_members * workput_templates)) Works), the \`controlplane\` process with default flags. An informer per member records when each ConfigMap first shows each value. After every member holds every ConfigMap (first propagation: $(printf '%.1f' "$initial") s from the process start), the harness changes every template; a pair's latency is from just before its template's update until the member shows the new value. Analysis: bench/results-workput.md.")
    else
      row "continuous Work throughput" "$workput_members members × $workput_templates templates" "failed" "failed" "—"
    fi
  fi

  if [ -z "${BENCH_SKIP_STATUSWATCH:-}" ]; then
    echo "== bench: member status latency ($statuswatch_members members x $statuswatch_templates templates)" >&2
    sw="$work/statuswatch.txt"
    if bench_run "$sw" ./controlplane/controller/e2e/ BenchmarkMemberStatusLatency FLOTILLA_BENCH_BINARY="$bench_bin" \
      FLOTILLA_BENCH_STATUSWATCH_MEMBERS="$statuswatch_members" FLOTILLA_BENCH_STATUSWATCH_TEMPLATES="$statuswatch_templates"; then
      p50=$(metric status-p50-s "$sw") p99=$(metric status-p99-s "$sw")
      row "continuous member status: member status change → host template status" "$statuswatch_members members × $statuswatch_templates templates" \
        "$(printf '%.2f' "$p50") s (p50)" \
        "$(printf '%.2f' "$p99") s (p99); Work writes per change $(printf '%.2f' "$(metric work-writes-per-change "$sw")"), host writes per change $(printf '%.2f' "$(metric host-writes-per-change "$sw")"), idle resync writes $(printf '%.0f' "$(metric idle-writes "$sw")")" \
        "p99 ≤ 2 s: $(verdict "$p99" 2)"
      notes+=("- continuous member status: a host and $statuswatch_members apiserver-only members, $statuswatch_templates one-replica Deployments Duplicated to every member ($((statuswatch_members * statuswatch_templates)) Works), the \`controlplane\` process with default flags. Once every member runs every Deployment, the harness sets each member copy's status to one ready replica (status subresource, 32 at a time); a template's latency is from the last member write for it until a host informer sees readyReplicas equal the member count. Host writes are the host apiserver's apiserver_request_total around that phase (Leases and Events left out) over the member changes, and over the 35 s after it (one default resync, which must write nothing).")
    else
      row "continuous member status" "$statuswatch_members members × $statuswatch_templates templates" "failed" "failed" "p99 ≤ 2 s"
    fi
  fi

  if [ -z "${BENCH_SKIP_MCS:-}" ]; then
    echo "== bench: multi-cluster services ($mcs_services Services x $mcs_clusters members)" >&2
    mcsf="$work/mcs.txt"
    if bench_run "$mcsf" ./controlplane/controller/e2e/ BenchmarkMCSSync \
      FLOTILLA_BENCH_MCS_SERVICES="$mcs_services" FLOTILLA_BENCH_MCS_CLUSTERS="$mcs_clusters"; then
      ww=$(metric work-writes-per-change-per-consumer "$mcsf") unchanged=$(metric unchanged-writes "$mcsf")
      row "multi-cluster services: exports created → every consumer has its slices; endpoint change → consumers" "$mcs_services Services × $mcs_clusters members" \
        "$(printf '%.1f' "$(metric sync-s "$mcsf")") s (full sync)" \
        "change p50 $(printf '%.2f' "$(metric change-p50-s "$mcsf")") s, p99 $(printf '%.2f' "$(metric change-p99-s "$mcsf")") s; Work writes per change per consumer $(printf '%.2f' "$ww"), collected copy $(printf '%.2f' "$(metric collected-writes-per-change "$mcsf")"), Work status $(printf '%.2f' "$(metric work-status-writes-per-change-per-consumer "$mcsf")") per consumer, host writes per change $(printf '%.2f' "$(metric host-writes-per-change "$mcsf")"); unchanged updates $(printf '%.0f' "$unchanged") writes (idle $(printf '%.0f' "$(metric idle-writes "$mcsf")")); Work writes refused with 409 $(printf '%.0f' "$(metric work-conflicts "$mcsf")")" \
        "1 Work write per changed slice per consumer: $(verdict "$ww" 1); none for an unchanged one: $(verdict "$unchanged" 0); no 409: $(verdict "$(metric work-conflicts "$mcsf")" 0)"
      notes+=("- multi-cluster services: a host and $mcs_clusters apiserver-only members; the first half run $mcs_services Services with one EndpointSlice of one address each (written by the harness, as kube-controller-manager would), the rest import them; the control plane runs in the benchmark's process with the default resync. Full sync is from creating the $mcs_services ServiceExports and ServiceImports and their two PropagationPolicies until every consumer holds every Service's slices with every provider's address. Then 10 endpoint changes one at a time (a provider's slice gains an address; 2 s let after each), and as many slice updates that change nothing an export reads (an annotation). Host writes are the host apiserver's apiserver_request_total over those phases, Leases and Events left out; the control plane's host client at the controlplane command's --kube-api-qps=400 --kube-api-burst=600. Analysis and profiles: bench/results-mcs.md.")
    else
      row "multi-cluster services" "$mcs_services Services × $mcs_clusters members" "failed" "failed" "1 Work write per changed slice per consumer"
    fi
  fi
fi

# --- continuous mode: restart, leader change, flapping cluster (issue 20) ----
if [ -z "${BENCH_SKIP_CONTINUOUS:-}" ] && [ -z "${BENCH_SKIP_RESTART:-}" ]; then
  restart_env=(FLOTILLA_BENCH_BINARY="$bench_bin" FLOTILLA_BENCH_CLUSTERS=$scale_clusters FLOTILLA_BENCH_TEMPLATES=$scale_templates FLOTILLA_BENCH_TIMEOUT=110m)
  # restart_bench NAME: runs BenchmarkContinuousNAME into $work/NAME.txt.
  restart_bench() {
    echo "== bench: continuous $1 ($scale_clusters clusters x $scale_templates templates)" >&2
    bench_run "$work/$1.txt" ./controlplane/controller/e2e/ "BenchmarkContinuous$1" "${restart_env[@]}"
  }
  size="$scale_clusters clusters × $scale_templates templates"
  if restart_bench WarmRestart; then
    f="$work/WarmRestart.txt" settle=$(metric restart-settle-s "$work/WarmRestart.txt") writes=$(metric restart-writes "$work/WarmRestart.txt")
    row "continuous warm restart: new process → settled" "$size" "$(printf '%.1f' "$settle") s (wall)" \
      "$(printf '%.0f' "$writes") writes ($(metric restart-lease-writes "$f") Lease, $(metric restart-event-writes "$f") Event)" \
      "≤ 30 s: $(verdict "$settle" 30), zero writes: $(verdict "$writes" 0)"
  else
    row "continuous warm restart" "$size" "failed" "failed" "≤ 30 s, zero writes"
  fi
  if restart_bench LeaderChange; then
    f="$work/LeaderChange.txt" settle=$(metric takeover-settle-s "$work/LeaderChange.txt") writes=$(metric takeover-writes "$work/LeaderChange.txt")
    row "continuous leader change: leader killed → standby settled" "$size" "$(printf '%.1f' "$settle") s (wall)" \
      "$(printf '%.0f' "$writes") writes ($(metric takeover-lease-writes "$f") Lease, $(metric takeover-event-writes "$f") Event; standby before: $(metric standby-writes "$f"))" \
      "≤ 30 s: $(verdict "$settle" 30), zero duplicate writes: $(verdict "$writes" 0)"
  else
    row "continuous leader change" "$size" "failed" "failed" "≤ 30 s, zero duplicate writes"
  fi
  if restart_bench ClusterFlap; then
    f="$work/ClusterFlap.txt" could=$(metric could-change "$work/ClusterFlap.txt") perflip=$(metric requeues-per-flip "$work/ClusterFlap.txt")
    row "continuous flapping cluster: Ready ↔ NotReady every 3 s for 60 s" "$size" \
      "$(printf '%.0f' "$(metric requeues "$f")") requeues over $(metric flips "$f") flips ($(printf '%.0f' "$perflip") per flip)" \
      "$(printf '%.0f' "$(metric flap-writes "$f")") writes" \
      "requeued per Cluster event ≤ could change ($could of $(metric bindings "$f") bindings; two events a flip: Ready, then the taint)"
  else
    row "continuous flapping cluster" "$size" "failed" "failed" "only bindings that could change"
  fi
  notes+=("- continuous restart rows: the fleet of the full resync row, settled by a first \`controlplane\` process (every binding scheduled, its work queues empty, no host write for 15 s). Writes are the host apiserver's apiserver_request_total for POST, PUT, PATCH, APPLY, DELETE and DELETECOLLECTION, whatever their code, read before and after; Lease and Event writes are shown apart. Warm restart: SIGTERM, a new process, time until its last write or queued item. Leader change: two processes with --leader-elect=true (lease 15 s, renew 10 s, retry 2 s), the leader settles, the standby starts, the leader gets SIGKILL; the time includes waiting for its lease to expire. Flapping: the harness sets member-0005's Ready condition False and True in turn; requeues is flotilla_scheduler_cluster_requeues_total of the process, could-change the bindings placed on member-0005 or whose policy has no cluster affinity; writes exclude the harness's own status writes. Details: bench/results-restart.md.")
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
  if [ "${#notes[@]}" -gt 0 ]; then
    echo
    echo "## How the rows were measured"
    echo
    printf '%s\n' "${notes[@]}"
  fi
} >"$work/results.md"
mkdir -p "$(dirname "$out")"
cp "$work/results.md" "$out"
cat "$out"
echo >&2
echo "bench: saved to $out" >&2
exit "$status"
