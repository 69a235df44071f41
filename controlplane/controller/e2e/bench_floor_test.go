//go:build linux

package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Sizes of BenchmarkHostWriteFloor, from the environment.
const (
	envFloorBindings = "FLOTILLA_BENCH_FLOOR_BINDINGS" // bindings written; default 3000
	envFloorWorkers  = "FLOTILLA_BENCH_FLOOR_WORKERS"  // concurrent writers; default 32
)

// BenchmarkHostWriteFloor measures what the host apiserver of this machine
// can take, the floor under BenchmarkContinuousScale's figure: a client
// with no client-side rate limit makes, per binding, the three writes that
// a cold start cannot do without (the detector's create, with the
// finalizer; the scheduler's spec patch with the clusters; its status patch
// with the Scheduled condition), with FLOTILLA_BENCH_FLOOR_WORKERS bindings
// in flight. Nothing else runs against the host.
//
// Metrics: writes/s (all three kinds), bindings/s (bindings through all
// three), and the CPU seconds of the host's apiserver and etcd per 1,000
// writes.
func BenchmarkHostWriteFloor(b *testing.B) {
	n := testkit.EnvInt(b, envFloorBindings, 3000)
	workers := testkit.EnvInt(b, envFloorWorkers, 32)
	ctx := b.Context()
	fleet, _, _, hub := startBenchHost(b, -1, 0) // no client-side limit
	if err := crd.Install(ctx, hub, time.Minute); err != nil {
		b.Fatal(err)
	}
	const ns = "floor"
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	var placement api.Placement
	if err := yaml.UnmarshalStrict([]byte(scalePolicies[0]), &struct {
		ResourceSelectors any            `json:"resourceSelectors"`
		Placement         *api.Placement `json:"placement"`
	}{Placement: &placement}); err != nil {
		b.Fatal(err)
	}
	cpu := newCPUMeter(fleet)
	cpuBefore := cpu.read()
	b.ResetTimer()
	start := time.Now()
	err := benchParallel(ctx, n, workers, func(ctx context.Context, i int) error {
		return writeFloorBinding(ctx, hub, ns, i, &placement)
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	cpuAfter := cpu.read()
	writes := float64(3 * n)
	b.Logf("%d bindings × 3 writes with %d writers in %v: %.0f writes/s; CPU: %s", n, workers, elapsed.Round(time.Millisecond), writes/elapsed.Seconds(), cpuBetween(cpuBefore, cpuAfter))
	b.ReportMetric(writes/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "bindings/s")
	b.ReportMetric((cpuAfter["kube-apiserver"]-cpuBefore["kube-apiserver"]).Seconds()*1000/writes, "apiserver-cpu-s/1000writes")
	b.ReportMetric((cpuAfter["etcd"]-cpuBefore["etcd"]).Seconds()*1000/writes, "etcd-cpu-s/1000writes")
	b.ReportMetric(0, "ns/op")
}

// writeFloorBinding makes the three writes of one binding's cold start.
func writeFloorBinding(ctx context.Context, hub client.Client, ns string, i int, placement *api.Placement) error {
	tmpl := scaleDeployment(i)
	rb := &workv1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-deployment.apps", tmpl.Name),
			Finalizers: []string{shared.FinalizerExecution}, Labels: map[string]string{hoststore.LabelPolicy: "PropagationPolicy.all"}},
		Spec: api.ResourceBindingSpec{
			Resource:            api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: tmpl.Name, UID: "00000000-0000-0000-0000-000000000000"},
			Replicas:            *tmpl.Spec.Replicas,
			ReplicaRequirements: &api.ReplicaRequirements{ResourceRequest: tmpl.Spec.Template.Spec.Containers[0].Resources.Requests},
			Placement:           placement.DeepCopy(),
		},
	}
	if err := hub.Create(ctx, rb); err != nil {
		return fmt.Errorf("create binding %s: %w", rb.Name, err)
	}
	orig := rb.DeepCopy()
	rb.Spec.Clusters = []api.TargetCluster{{Name: "member-0001", Replicas: 2}, {Name: "member-0002", Replicas: rb.Spec.Replicas - 2}}
	if err := hub.Patch(ctx, rb, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write schedule of binding %s: %w", rb.Name, err)
	}
	orig = rb.DeepCopy()
	apimeta.SetStatusCondition(&rb.Status.Conditions, metav1.Condition{Type: api.ConditionScheduled, Status: metav1.ConditionTrue, Reason: "Success",
		Message: "binding is scheduled", ObservedGeneration: rb.Generation, LastTransitionTime: metav1.Now()})
	rb.Status.SchedulerObservedGeneration = rb.Generation
	if err := hub.Status().Patch(ctx, rb, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("write status of binding %s: %w", rb.Name, err)
	}
	return nil
}
