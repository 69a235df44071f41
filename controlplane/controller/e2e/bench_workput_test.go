//go:build linux

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Sizes and flags of BenchmarkWorkThroughput, from the environment.
const (
	envWorkputMembers   = "FLOTILLA_BENCH_WORKPUT_MEMBERS"   // member apiservers; default 10
	envWorkputTemplates = "FLOTILLA_BENCH_WORKPUT_TEMPLATES" // ConfigMaps, each Duplicated to every member; default 1000
	envWorkputTimeout   = "FLOTILLA_BENCH_WORKPUT_TIMEOUT"   // bound of each wait; default 30m
	envWorkputArgs      = "FLOTILLA_BENCH_WORKPUT_ARGS"      // extra flags of the control plane, space-separated
)

// workputNamespace holds the benchmark's templates, on the host and in
// every member.
const workputNamespace = "workput"

// BenchmarkWorkThroughput measures how fast template changes reach real
// members: a host apiserver and FLOTILLA_BENCH_WORKPUT_MEMBERS member
// apiservers (apiserver-only testenv clusters, so every Work's object is
// stored in its member), FLOTILLA_BENCH_WORKPUT_TEMPLATES ConfigMaps and one
// PropagationPolicy duplicating them to every member: members × templates
// Works. The `controlplane` subcommand runs in a process of its own with its
// default flags (plus FLOTILLA_BENCH_WORKPUT_ARGS).
//
// An informer on each member records when each ConfigMap first shows each
// value of its "v" key. Once every member holds every ConfigMap at v=1
// (initial-s: process start → the last of them), the harness changes every
// template to v=2 and the benchmark waits until every member holds every
// ConfigMap at v=2. The latency of a (template, member) pair is from just
// before the harness's update of the template until the member's informer
// saw the new value.
//
// Metrics: update-p50-s, update-p99-s and update-max-s over the pairs,
// update-total-s (first template change → last pair updated), change-s (how
// long the harness took to change every template), initial-s, peak-rss-MB.
func BenchmarkWorkThroughput(b *testing.B) {
	nMembers := testkit.EnvInt(b, envWorkputMembers, 10)
	nTemplates := testkit.EnvInt(b, envWorkputTemplates, 1000)
	timeout := testkit.EnvDuration(b, envWorkputTimeout, 30*time.Minute)
	binary := benchBinary(b)
	ctx := b.Context()

	hostFleet, members, hub := benchHostAndMembers(b, nMembers)
	host := hostFleet.Clusters[0]
	seen, err := watchWorkput(ctx, members)
	if err != nil {
		b.Fatal(err)
	}
	if err := createWorkputFleet(ctx, hub, members, nTemplates); err != nil {
		b.Fatal(err)
	}

	args := []string{"--log-level=warn"}
	if v := os.Getenv(envWorkputArgs); v != "" {
		args = append(args, strings.Fields(v)...)
	}
	b.ResetTimer()
	proc := startBenchControlplane(b, binary, host.KubeconfigPath, hostFleet.Dir, args...)
	if err := seen.wait(ctx, proc, "1", nMembers*nTemplates, timeout); err != nil {
		b.Fatal(err)
	}
	initial := seen.last("1").Sub(proc.started)
	b.Logf("every member holds every ConfigMap at v=1 %v after the control plane started", initial.Round(time.Millisecond))

	changed := make([]time.Time, nTemplates)
	changeStart := time.Now()
	if err := benchParallel(ctx, nTemplates, 32, func(ctx context.Context, i int) error {
		cm := workputConfigMap(i, "2")
		changed[i] = time.Now()
		if err := hub.Update(ctx, cm); err != nil {
			return fmt.Errorf("change configmap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	change := time.Since(changeStart)
	if err := seen.wait(ctx, proc, "2", nMembers*nTemplates, timeout); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	lat := seen.latencies("2", changed)
	total := seen.last("2").Sub(changeStart)
	slices.Sort(lat)
	quantile := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	peak, _, err := proc.memory()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d members × %d templates: changed in %v; per (template, member) p50 %v, p99 %v, max %v; all updated %v after the first change; peak RSS %d MB",
		nMembers, nTemplates, change.Round(time.Millisecond), quantile(0.5).Round(time.Millisecond), quantile(0.99).Round(time.Millisecond),
		lat[len(lat)-1].Round(time.Millisecond), total.Round(time.Millisecond), peak>>20)
	b.ReportMetric(quantile(0.5).Seconds(), "update-p50-s")
	b.ReportMetric(quantile(0.99).Seconds(), "update-p99-s")
	b.ReportMetric(lat[len(lat)-1].Seconds(), "update-max-s")
	b.ReportMetric(total.Seconds(), "update-total-s")
	b.ReportMetric(change.Seconds(), "change-s")
	b.ReportMetric(initial.Seconds(), "initial-s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
	b.ReportMetric(0, "ns/op")
}

// createWorkputFleet registers the members, creates the templates'
// namespace, a policy duplicating every ConfigMap there to every member, and
// the ConfigMaps at v=1.
func createWorkputFleet(ctx context.Context, hub client.Client, members []*testenv.Cluster, nTemplates int) error {
	names, err := registerBenchMembers(ctx, hub, members)
	if err != nil {
		return err
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workputNamespace}}); err != nil {
		return fmt.Errorf("create namespace %s: %w", workputNamespace, err)
	}
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: workputNamespace, Name: "all"}}
	spec := fmt.Sprintf(`
resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
placement:
  clusterAffinity: {clusterNames: [%s]}
  replicaScheduling: {replicaSchedulingType: Duplicated}
`, strings.Join(names, ", "))
	if err := yaml.UnmarshalStrict([]byte(spec), &pp.Spec); err != nil {
		return fmt.Errorf("decode policy %s/all: %w", workputNamespace, err)
	}
	if err := hub.Create(ctx, pp); err != nil {
		return fmt.Errorf("create policy %s/all: %w", workputNamespace, err)
	}
	return benchParallel(ctx, nTemplates, 32, func(ctx context.Context, i int) error {
		cm := workputConfigMap(i, "1")
		if err := hub.Create(ctx, cm); err != nil {
			return fmt.Errorf("create configmap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		return nil
	})
}

// workputConfigMap is template i with value v of key "v". It carries no
// resourceVersion: the harness's update overwrites whatever the host holds.
func workputConfigMap(i int, v string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: workputNamespace, Name: fmt.Sprintf("cm-%05d", i)},
		Data:       map[string]string{"v": v, "payload": strings.Repeat("x", 256)},
	}
}

// workputSeen records when each member first showed each value of each
// ConfigMap. It is safe for concurrent use.
type workputSeen struct {
	mu sync.Mutex
	// at[value][member/name] is when the member's informer first saw it.
	at map[string]map[string]time.Time
}

// watchWorkput starts an informer on ConfigMaps of workputNamespace in
// every member, recording into the returned workputSeen; they stop with ctx.
func watchWorkput(ctx context.Context, members []*testenv.Cluster) (*workputSeen, error) {
	s := &workputSeen{at: map[string]map[string]time.Time{}}
	for _, m := range members {
		cs, err := kubernetes.NewForConfig(m.RESTConfig())
		if err != nil {
			return nil, fmt.Errorf("client of member %s: %w", m.Name, err)
		}
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(workputNamespace))
		inf := factory.Core().V1().ConfigMaps().Informer()
		name := m.Name
		record := func(obj any) {
			if cm, ok := obj.(*corev1.ConfigMap); ok {
				s.record(name+"/"+cm.Name, cm.Data["v"], time.Now())
			}
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    record,
			UpdateFunc: func(_, obj any) { record(obj) },
		}); err != nil {
			return nil, fmt.Errorf("watch member %s: %w", m.Name, err)
		}
		factory.Start(ctx.Done())
	}
	return s, nil
}

func (s *workputSeen) record(key, value string, at time.Time) {
	if value == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.at[value]
	if byKey == nil {
		byKey = map[string]time.Time{}
		s.at[value] = byKey
	}
	if _, ok := byKey[key]; !ok {
		byKey[key] = at
	}
}

func (s *workputSeen) count(value string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at[value])
}

// last is when the last (member, ConfigMap) pair showed value.
func (s *workputSeen) last(value string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last time.Time
	for _, t := range s.at[value] {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// latencies returns, for every (member, ConfigMap) pair that showed value,
// the time from its template's change (changed, by template index) until
// then.
func (s *workputSeen) latencies(value string, changed []time.Time) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]time.Duration, 0, len(s.at[value]))
	for key, t := range s.at[value] {
		var i int
		if _, err := fmt.Sscanf(key[strings.LastIndex(key, "/")+1:], "cm-%05d", &i); err != nil || i >= len(changed) {
			continue
		}
		out = append(out, t.Sub(changed[i]))
	}
	return out
}

// wait waits until want (member, ConfigMap) pairs have shown value.
func (s *workputSeen) wait(ctx context.Context, proc *benchProcess, value string, want int, timeout time.Duration) error {
	start := time.Now()
	lastLog := start
	return benchPoll(ctx, fmt.Sprintf("every member holds every ConfigMap at v=%s", value), 200*time.Millisecond, timeout, func() (bool, string, error) {
		if err := proc.alive(); err != nil {
			return false, "", err
		}
		n := s.count(value)
		progress := fmt.Sprintf("%d of %d (member, ConfigMap) pairs at v=%s", n, want, value)
		if time.Since(lastLog) > 30*time.Second {
			lastLog = time.Now()
			fmt.Fprintf(os.Stderr, "workput: after %v: %s\n", time.Since(start).Round(time.Second), progress)
		}
		return n >= want, progress, nil
	})
}
