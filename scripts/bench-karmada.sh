#!/usr/bin/env bash
# scripts/bench-karmada.sh KARMADA_SRC: flotilla's scheduler beside Karmada's
# scheduler core, on identical inputs, in alternating runs (issue 40).
#
# KARMADA_SRC is a Karmada source tree with its vendor/ directory (for
# instance `git archive HEAD | tar -x -C DIR` of github.com/karmada-io/karmada;
# its module is not served by the Go proxy, so it builds with -mod=vendor).
# The script
#   1. writes one JSON fixture with cmd/schedfixture: the fleet of issue 23
#      (controlplane/scheduler/benchfleet) at each size as Karmada Clusters,
#      and a Deployment binding per strategy as Karmada ResourceBindings;
#   2. drops scripts/testdata/karmada/flotilla_sidebyside_test.go into
#      KARMADA_SRC/pkg/scheduler/core (removed on exit) and builds it: one
#      call of Karmada's generic scheduler Schedule per decision (in-tree
#      plugins, general estimator, its cluster cache over a lister holding
#      the fixture's Clusters);
#   3. builds flotilla's BenchmarkKarmadaSideBySide, which reads the same
#      fixture: "single" is Schedule without a Snapshot (a one-template
#      terraform plan), "fresh" builds a Snapshot for the one decision,
#      "shared" schedules over a Snapshot built once (the control plane);
#   4. runs the two in turns, size by size, BENCH_KARMADA_ROUNDS times, and
#      prints per size and strategy the medians and Karmada's time over
#      flotilla's, by wall time and by process CPU time (user + system of
#      every thread, the garbage collector's included: on a shared machine
#      it moves less than wall time), and whether both made the same
#      decision.
# It asserts nothing. `make bench` runs it when KARMADA_SRC is set.
#
# Environment:
#   BENCH_KARMADA_ROUNDS     alternating rounds (default 3)
#   BENCH_KARMADA_BENCHTIME  -test.benchtime of each case (default 1s)
#   BENCH_KARMADA_SIZES      fleet sizes (default 100,1000,5000)
#   BENCH_KARMADA_TSV        also write the medians there, one line per case:
#                            size strategy karmada-wall-ns karmada-cpu-ns then,
#                            for single, fresh and shared, wall-ns cpu-ns,
#                            then same|differs
#   BENCH_KARMADA_FLOTILLA_TEST  a prebuilt flotilla scheduler test binary to
#                            measure instead of this tree's (for before/after)
set -euo pipefail
src=${1:-${KARMADA_SRC:-}}
if [ -z "$src" ]; then
  echo "usage: scripts/bench-karmada.sh KARMADA_SRC (a Karmada source tree with vendor/)" >&2
  exit 2
fi
src=$(cd "$src" && pwd)
core="$src/pkg/scheduler/core"
if [ ! -f "$core/generic_scheduler.go" ] || [ ! -d "$src/vendor" ]; then
  echo "bench-karmada: $src is not a Karmada source tree with vendor/ (no pkg/scheduler/core/generic_scheduler.go)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${BENCH_KARMADA_ROUNDS:-3}
benchtime=${BENCH_KARMADA_BENCHTIME:-1s}
sizes=${BENCH_KARMADA_SIZES:-100,1000,5000}
work=$(mktemp -d)
dropped="$core/zz_flotilla_sidebyside_test.go"
trap 'rm -f "$dropped"; rm -rf "$work"' EXIT

cd "$root"
echo "== bench-karmada: fixture ($sizes clusters)" >&2
go run ./cmd/schedfixture -out "$work/fixture" -sizes "$sizes"
cp scripts/testdata/karmada/flotilla_sidebyside_test.go "$dropped"
echo "== bench-karmada: building Karmada's scheduler core at $src ($(cd "$src" && git rev-parse --short HEAD 2>/dev/null || echo "no git"))" >&2
(cd "$src" && go test -mod=vendor -vet=off -c -o "$work/karmada.test" ./pkg/scheduler/core)
if [ -n "${BENCH_KARMADA_FLOTILLA_TEST:-}" ]; then
  cp "$BENCH_KARMADA_FLOTILLA_TEST" "$work/flotilla.test"
else
  echo "== bench-karmada: building flotilla's scheduler" >&2
  go test -c -o "$work/flotilla.test" ./controlplane/scheduler/
fi

mkdir -p "$work/decisions"
export FLOTILLA_KARMADA_FIXTURE="$work/fixture" FLOTILLA_KARMADA_DECISIONS="$work/decisions"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$rounds"); do
  for n in ${sizes//,/ }; do
    echo "== bench-karmada: round $r/$rounds, $n clusters" >&2
    "$work/karmada.test" -test.run '^$' -test.bench "^BenchmarkFlotillaSideBySide\$/^clusters=$n\$/" \
      -test.benchtime="$benchtime" -test.benchmem >>"$work/karmada.txt"
    "$work/flotilla.test" -test.run '^$' -test.bench "^BenchmarkKarmadaSideBySide\$/^clusters=$n\$/" \
      -test.benchtime="$benchtime" -test.benchmem >>"$work/flotilla.txt"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# medians FILE: "case wall-ns cpu-ns" per case (the name after the
# benchmark's, -GOMAXPROCS dropped), medians over the rounds.
medians() {
  awk '
    /^Benchmark/ {
      name = $1; sub(/^[^\/]*\//, "", name); sub(/-[0-9]+$/, "", name)
      for (i = 2; i < NF; i++) { if ($(i+1) == "ns/op") w[name] = w[name] " " $i; if ($(i+1) == "cpu-ns/op") c[name] = c[name] " " $i }
    }
    function median(list,   n, v, i, j, t) {
      n = split(list, v, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
      return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    END { for (k in w) printf "%s %.0f %.0f\n", k, median(w[k]), median(c[k]) }' "$1"
}
medians "$work/karmada.txt" >"$work/karmada.med"
medians "$work/flotilla.txt" >"$work/flotilla.med"

tsv="$work/results.tsv"
: >"$tsv"
for n in ${sizes//,/ }; do
  for s in Duplicated StaticWeightedSpread DynamicWeighted Aggregated DynamicWeightedSpread; do
    read -r kw kc < <(awk -v k="clusters=$n/$s" '$1 == k { print $2, $3 }' "$work/karmada.med")
    line="$n $s ${kw:-?} ${kc:-?}"
    for m in single fresh shared; do
      read -r fw fc < <(awk -v k="clusters=$n/$s/$m" '$1 == k { print $2, $3 }' "$work/flotilla.med")
      line="$line ${fw:-?} ${fc:-?}"
    done
    same=differs
    if cmp -s "$work/decisions/karmada-$n-$s.txt" "$work/decisions/flotilla-$n-$s.txt"; then
      same=same
    fi
    echo "$line $same" >>"$tsv"
  done
done
if [ -n "${BENCH_KARMADA_TSV:-}" ]; then
  cp "$tsv" "$BENCH_KARMADA_TSV"
fi

echo "Karmada $(cd "$src" && git rev-parse --short HEAD 2>/dev/null || echo "(no git)") beside flotilla $(git rev-parse --short HEAD), $rounds alternating rounds, -test.benchtime=$benchtime, medians; load average before $load_before, after $load_after; $(nproc) cores."
echo "Ratios are Karmada's time over flotilla's, by wall time / by process CPU time."
echo
echo "| clusters | strategy | Karmada (ms, wall / CPU) | flotilla single (µs, wall / CPU) | single | fresh Snapshot | shared Snapshot | same decision |"
echo "|---|---|---|---|---|---|---|---|"
awk '
  function r(k, f) { return (k == "?" || f == "?" || f == 0) ? "?" : sprintf("%.0f×", k / f) }
  {
    printf "| %s | %s | %.1f / %.1f | %.0f / %.0f | %s / %s | %s / %s | %s / %s | %s |\n", $1, $2, $3 / 1e6, $4 / 1e6, $5 / 1e3, $6 / 1e3,
      r($3, $5), r($4, $6), r($3, $7), r($4, $8), r($3, $9), r($4, $10), $11
  }' "$tsv"
