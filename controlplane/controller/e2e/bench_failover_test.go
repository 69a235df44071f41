//go:build linux

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Settings of BenchmarkContinuousFailover, from the environment.
const (
	envFailoverRuns = "FLOTILLA_BENCH_FAILOVER_RUNS" // member kills measured; default 3
	// envFailoverArgs replaces failoverArgs (space-separated controlplane flags).
	envFailoverArgs = "FLOTILLA_BENCH_FAILOVER_ARGS"
)

// failoverArgs are the control plane's failure-detection settings the
// benchmark measures. A member must fail its /readyz probe for 10 s before it
// is NotReady and stay NotReady 10 s more before its NoExecute taint moves
// replicas: 20 s of continuous failure, so an apiserver restart or a lost
// probe does not move workloads, and failover fits in 30 s. Probes every 2 s
// cost one GET per member. Karmada's defaults (10 s probes, 30 s failure
// threshold, 5 min failover eviction timeout) would measure about 5.5 min by
// design.
var failoverArgs = []string{
	"--cluster-probe-interval=2s",
	"--cluster-failure-threshold=10s",
	"--cluster-success-threshold=10s",
	"--no-execute-after=10s",
}

// failoverReplicas is the Deployment's size: 2 per member, 3 per survivor.
const failoverReplicas = 6

// BenchmarkContinuousFailover measures failover in continuous mode: a host
// apiserver, three full member clusters (kube-controller-manager, scheduler
// and kwok run real pods on fake nodes), the `controlplane` subcommand in a
// process of its own, and a Deployment divided 2/2/2 over the members. Each
// run stops one member's kube-apiserver and measures the time until the
// Deployment's readyReplicas on the two remaining members sum to the total.
// Between runs the member is restarted and waits to be Ready and untainted
// again; each run uses a fresh Deployment and stops the next member.
//
// Metrics: failover-p50-s, failover-min-s, failover-max-s over the runs, and
// failover-run<N>-s for each run (benchmark logs are truncated).
func BenchmarkContinuousFailover(b *testing.B) {
	runs := testkit.EnvInt(b, envFailoverRuns, 3)
	args := failoverArgs
	if v := os.Getenv(envFailoverArgs); v != "" {
		args = strings.Fields(v)
	}
	binary := benchBinary(b)
	ctx := b.Context()

	hostFleet := testenv.Start(b, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly})
	memberFleet := testenv.Start(b, testenv.Options{Clusters: 3, Mode: testenv.Full})
	host, members := hostFleet.Clusters[0], memberFleet.Clusters
	scheme, err := shared.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	hub, err := client.New(host.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	if err := crd.Install(ctx, hub, time.Minute); err != nil {
		b.Fatal(err)
	}
	memberClients := make([]client.Client, len(members))
	names := make([]string, len(members))
	for i, m := range members {
		if memberClients[i], err = client.New(m.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
			b.Fatal(err)
		}
		names[i] = m.Name
	}
	if err := registerFailoverFleet(ctx, hub, members); err != nil {
		b.Fatal(err)
	}
	proc := startBenchControlplane(b, binary, host.KubeconfigPath, hostFleet.Dir, append([]string{"--log-level=info"}, args...)...)
	for _, n := range names {
		if err := waitClusterHealthy(ctx, hub, proc, n); err != nil {
			b.Fatal(err)
		}
	}

	b.ResetTimer()
	var took []time.Duration
	for run := range runs {
		victim := run % len(members)
		name := fmt.Sprintf("web-%d", run+1)
		if err := hub.Create(ctx, failoverDeployment(name)); err != nil {
			b.Fatalf("create deployment %s: %v", name, err)
		}
		if err := waitReady(ctx, proc, memberClients, name, []int32{2, 2, 2}); err != nil {
			b.Fatal(err)
		}
		survivors := slices.Delete(slices.Clone(memberClients), victim, victim+1)
		start := time.Now()
		members[victim].StopAPIServer()
		if err := waitReady(ctx, proc, survivors, name, nil); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		took = append(took, d)
		b.Logf("failover run %d: %s stopped, %d replicas ready on the other members after %v", run+1, names[victim], failoverReplicas, d.Round(10*time.Millisecond))
		if err := members[victim].StartAPIServer(ctx); err != nil {
			b.Fatal(err)
		}
		if err := waitClusterHealthy(ctx, hub, proc, names[victim]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	for i, d := range took {
		b.ReportMetric(d.Seconds(), fmt.Sprintf("failover-run%d-s", i+1))
	}
	slices.Sort(took)
	b.ReportMetric(took[(len(took)-1)/2].Seconds(), "failover-p50-s")
	b.ReportMetric(took[0].Seconds(), "failover-min-s")
	b.ReportMetric(took[len(took)-1].Seconds(), "failover-max-s")
	b.ReportMetric(0, "ns/op")
}

// registerFailoverFleet creates the members' credentials and Clusters and the
// policy dividing every Deployment of namespace failover over them.
func registerFailoverFleet(ctx context.Context, hub client.Client, members []*testenv.Cluster) error {
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "failover"}}); err != nil {
		return fmt.Errorf("create namespace failover: %w", err)
	}
	names, err := registerBenchMembers(ctx, hub, members)
	if err != nil {
		return err
	}
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "failover", Name: "web"}}
	spec := fmt.Sprintf(`
resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
placement:
  clusterAffinity: {clusterNames: [%s]}
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Weighted
`, strings.Join(names, ", "))
	if err := yaml.UnmarshalStrict([]byte(spec), &pp.Spec); err != nil {
		return fmt.Errorf("decode policy failover/web: %w", err)
	}
	if err := hub.Create(ctx, pp); err != nil {
		return fmt.Errorf("create policy failover/web: %w", err)
	}
	return nil
}

// registerBenchMembers creates namespace flotilla-system and, for each
// member, its credentials Secret (token and CA) and a Cluster reaching it;
// it returns the members' names.
func registerBenchMembers(ctx context.Context, hub client.Client, members []*testenv.Cluster) ([]string, error) {
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-system"}}); err != nil {
		return nil, fmt.Errorf("create namespace flotilla-system: %w", err)
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.Name
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: m.Name},
			Data:       map[string][]byte{clusterv1.SecretKeyToken: []byte(m.Token), clusterv1.SecretKeyCA: m.CAData},
		}
		if err := hub.Create(ctx, secret); err != nil {
			return nil, fmt.Errorf("create secret of cluster %s: %w", m.Name, err)
		}
		cl := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: m.Name},
			Spec: api.ClusterSpec{
				APIEndpoint: m.Host,
				SecretRef:   &api.LocalSecretReference{Namespace: "flotilla-system", Name: m.Name},
			},
		}
		if err := hub.Create(ctx, cl); err != nil {
			return nil, fmt.Errorf("create cluster %s: %w", m.Name, err)
		}
	}
	return names, nil
}

// waitClusterHealthy waits until a Cluster is Ready and carries no taint.
func waitClusterHealthy(ctx context.Context, hub client.Client, proc *benchProcess, name string) error {
	return benchPoll(ctx, "cluster "+name+" Ready without taints", 250*time.Millisecond, 2*time.Minute, func() (bool, string, error) {
		if err := proc.alive(); err != nil {
			return false, "", err
		}
		var cl clusterv1.Cluster
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
			return false, err.Error(), nil //nolint:nilerr // a transient error is retried until the deadline
		}
		ok := apimeta.IsStatusConditionTrue(cl.Status.Conditions, api.ClusterConditionReady) && len(cl.Spec.Taints) == 0
		return ok, fmt.Sprintf("conditions %v, taints %v", cl.Status.Conditions, cl.Spec.Taints), nil
	})
}

// waitReady waits until Deployment failover/NAME has the given readyReplicas
// on each member (want[i] for clients[i]), or, with want nil, until the
// members' readyReplicas sum to failoverReplicas.
func waitReady(ctx context.Context, proc *benchProcess, clients []client.Client, name string, want []int32) error {
	what := fmt.Sprintf("deployment %s ready replicas %v", name, want)
	if want == nil {
		what = fmt.Sprintf("deployment %s: %d ready replicas in total", name, failoverReplicas)
	}
	return benchPoll(ctx, what, 100*time.Millisecond, 3*time.Minute, func() (bool, string, error) {
		if err := proc.alive(); err != nil {
			return false, "", err
		}
		got := make([]int32, len(clients))
		var sum int32
		for i, c := range clients {
			var d appsv1.Deployment
			err := c.Get(ctx, client.ObjectKey{Namespace: "failover", Name: name}, &d)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return false, err.Error(), nil //nolint:nilerr // a transient error is retried until the deadline
			default:
				got[i] = d.Status.ReadyReplicas
				sum += d.Status.ReadyReplicas
			}
		}
		progress := fmt.Sprintf("ready replicas per member %v", got)
		if want == nil {
			return sum == failoverReplicas, progress, nil
		}
		return slices.Equal(got, want), progress, nil
	})
}

// failoverDeployment is a small Deployment of failoverReplicas replicas in
// namespace failover.
func failoverDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "failover", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(failoverReplicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}
