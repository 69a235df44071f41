package scheduler_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler/benchfleet"
)

// BenchmarkKarmadaSideBySide is flotilla's half of scripts/bench-karmada.sh:
// one decision per binding and fleet size of benchfleet, named
// clusters=N/Strategy/mode, on the same input as Karmada's half
// (BenchmarkFlotillaSideBySide in a Karmada checkout). With
// $FLOTILLA_KARMADA_FIXTURE set the fleets and bindings are read from the
// JSON both halves read (cmd/schedfixture); otherwise they are built in
// process, equal to it. The modes are the three ways a decision is made:
//
//   - single: Schedule without a Snapshot, as a one-template plan does;
//   - fresh: NewSnapshot then its Schedule, a Snapshot built for one
//     decision;
//   - shared: a Snapshot's Schedule, built once, as the control plane
//     schedules every binding while the fleet is unchanged.
//
// With $FLOTILLA_KARMADA_DECISIONS set each case's decision is written
// there as flotilla-N-Strategy.txt, in the format of Karmada's half.
func BenchmarkKarmadaSideBySide(b *testing.B) {
	cases, fleets := sideBySideInput(b)
	for _, n := range benchfleet.Sizes {
		clusters, ok := fleets[n]
		if !ok {
			continue
		}
		shared := scheduler.NewSnapshot(clusters)
		for _, c := range cases {
			binding := scheduler.BindingFor(&c.Binding, *c.Binding.Spec.Placement)
			res, err := scheduler.Schedule(clusters, binding)
			writeDecision(b, n, c.Name, res, err)
			modes := []struct {
				name   string
				decide func() (scheduler.Result, error)
			}{
				{"single", func() (scheduler.Result, error) { return scheduler.Schedule(clusters, binding) }},
				{"fresh", func() (scheduler.Result, error) { return scheduler.NewSnapshot(clusters).Schedule(binding) }},
				{"shared", func() (scheduler.Result, error) { return shared.Schedule(binding) }},
			}
			for _, m := range modes {
				b.Run(fmt.Sprintf("clusters=%d/%s/%s", n, c.Name, m.name), func(b *testing.B) {
					b.ReportAllocs()
					start := processCPU()
					for i := 0; i < b.N; i++ {
						var fit *scheduler.FitError
						if _, err := m.decide(); err != nil && !errors.As(err, &fit) {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// processCPU is the CPU time the process has used, every thread and the
// garbage collector's included: on a loaded machine it is steadier than
// the wall time, which counts the time others run. Karmada's half reports
// the same metric.
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// sideBySideInput is the bindings and, by size, the fleets: from the
// fixture directory in $FLOTILLA_KARMADA_FIXTURE, or built in process.
func sideBySideInput(b *testing.B) ([]benchfleet.Case, map[int][]*api.Cluster) {
	b.Helper()
	fleets := map[int][]*api.Cluster{}
	dir := os.Getenv("FLOTILLA_KARMADA_FIXTURE")
	if dir == "" {
		for _, n := range benchfleet.Sizes {
			fleets[n] = benchfleet.Clusters(n)
		}
		return benchfleet.Cases(), fleets
	}
	var cases []benchfleet.Case
	readJSON(b, filepath.Join(dir, "bindings.json"), &cases)
	for _, n := range benchfleet.Sizes {
		path := filepath.Join(dir, fmt.Sprintf("clusters-%d.json", n))
		if _, err := os.Stat(path); err != nil {
			continue
		}
		var list []api.Cluster
		readJSON(b, path, &list)
		clusters := make([]*api.Cluster, len(list))
		for i := range list {
			clusters[i] = &list[i]
		}
		fleets[n] = clusters
	}
	return cases, fleets
}

func readJSON(b *testing.B, path string, v any) {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
}

// writeDecision writes a decision for comparison with Karmada's: "name
// replicas" per cluster sorted, or "unschedulable".
func writeDecision(b *testing.B, n int, name string, res scheduler.Result, err error) {
	b.Helper()
	dir := os.Getenv("FLOTILLA_KARMADA_DECISIONS")
	if dir == "" {
		return
	}
	var lines []string
	if err != nil {
		lines = []string{"unschedulable"}
	}
	for _, t := range res.Clusters {
		lines = append(lines, fmt.Sprintf("%s %d", t.Name, t.Replicas))
	}
	sort.Strings(lines)
	path := filepath.Join(dir, fmt.Sprintf("flotilla-%d-%s.txt", n, name))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
}
