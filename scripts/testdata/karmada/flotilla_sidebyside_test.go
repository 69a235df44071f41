// This file is copied by flotilla's scripts/bench-karmada.sh into a Karmada
// checkout's pkg/scheduler/core and removed afterwards. It measures
// Karmada's generic scheduler (filter, score, select, assign, with its
// in-tree plugins and general estimator) on the fleet and bindings that
// flotilla's BenchmarkKarmadaSideBySide reads: the JSON fixture written by
// flotilla's cmd/schedfixture. It is flotilla's own benchmark code, not
// part of Karmada.

package core

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	clusterlister "github.com/karmada-io/karmada/pkg/generated/listers/cluster/v1alpha1"
	schedulercache "github.com/karmada-io/karmada/pkg/scheduler/cache"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins"
)

// flotillaCase is one binding of the fixture's bindings.json.
type flotillaCase struct {
	Name    string                       `json:"name"`
	Binding workv1alpha2.ResourceBinding `json:"binding"`
}

// BenchmarkFlotillaSideBySide is one Schedule call of Karmada's generic
// scheduler per binding and fleet size of the fixture in
// $FLOTILLA_KARMADA_FIXTURE, named clusters=N/Strategy. With
// $FLOTILLA_KARMADA_DECISIONS set, each case's decision is written there
// as karmada-N-Strategy.txt ("name replicas" per cluster, sorted by name,
// or "unschedulable"), to be compared with flotilla's.
func BenchmarkFlotillaSideBySide(b *testing.B) {
	dir := os.Getenv("FLOTILLA_KARMADA_FIXTURE")
	if dir == "" {
		b.Skip("FLOTILLA_KARMADA_FIXTURE is not set: run flotilla's scripts/bench-karmada.sh")
	}
	var cases []flotillaCase
	readFlotillaJSON(b, filepath.Join(dir, "bindings.json"), &cases)
	for _, n := range flotillaSizes(b, dir) {
		var clusters []clusterv1alpha1.Cluster
		readFlotillaJSON(b, filepath.Join(dir, fmt.Sprintf("clusters-%d.json", n)), &clusters)
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		for i := range clusters {
			if err := indexer.Add(&clusters[i]); err != nil {
				b.Fatal(err)
			}
		}
		sched, err := NewGenericScheduler(schedulercache.NewCache(clusterlister.NewClusterLister(indexer),
			cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}), 0), plugins.NewInTreeRegistry())
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cases {
			spec, status := c.Binding.Spec, c.Binding.Status
			decide := func() (ScheduleResult, error) {
				return sched.Schedule(context.Background(), &spec, &status, &ScheduleAlgorithmOption{})
			}
			b.Run(fmt.Sprintf("clusters=%d/%s", n, c.Name), func(b *testing.B) {
				res, err := decide()
				writeFlotillaDecision(b, n, c.Name, res, err)
				b.ReportAllocs()
				b.ResetTimer()
				start := flotillaCPU()
				for i := 0; i < b.N; i++ {
					_, _ = decide()
				}
				b.ReportMetric(float64(flotillaCPU()-start)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// flotillaCPU is the CPU time the process has used, every thread and the
// garbage collector's included: on a loaded machine it is steadier than
// the wall time, which counts the time others run.
func flotillaCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// flotillaSizes lists the fleet sizes of the fixture, ascending.
func flotillaSizes(b *testing.B, dir string) []int {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "clusters-*.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no clusters-N.json in %s", dir)
	}
	var sizes []int
	for _, f := range files {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "clusters-"), ".json"))
		if err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		sizes = append(sizes, n)
	}
	sort.Ints(sizes)
	return sizes
}

func readFlotillaJSON(b *testing.B, path string, v any) {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
}

func writeFlotillaDecision(b *testing.B, n int, name string, res ScheduleResult, err error) {
	b.Helper()
	dir := os.Getenv("FLOTILLA_KARMADA_DECISIONS")
	if dir == "" {
		return
	}
	var lines []string
	if err != nil {
		lines = []string{"unschedulable"}
	}
	for _, t := range res.SuggestedClusters {
		lines = append(lines, fmt.Sprintf("%s %d", t.Name, t.Replicas))
	}
	sort.Strings(lines)
	path := filepath.Join(dir, fmt.Sprintf("karmada-%d-%s.txt", n, name))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
}
