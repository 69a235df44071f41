package federatedhpa_test

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestFederatedHPAScalesOnCustomAndExternalMetrics runs the control plane
// over a member whose custom.metrics.k8s.io and external.metrics.k8s.io
// are a real metrics adapter (custom-metrics-apiserver's in-memory test
// provider behind its adapter server, through the member's aggregation
// layer). A Pods metric (requests_per_second, 10 per pod), an External
// metric (the adapter's fixed series of 44, 11 per replica) and an Object
// metric (the web Deployment's queue_length in the member, 50, 10 per
// replica) decide together: each of the two web pods at 30 asks for 6,
// the External metric for 4, the Object metric for 5, and the largest
// wins; then the pods fall to 1 and, after the scale-down window, the
// Object metric's 5 holds the template (read, it is above the External
// metric's 4; not read, the template would fall to 4).
func TestFederatedHPAScalesOnCustomAndExternalMetrics(t *testing.T) {
	start := time.Now()
	f := controllertest.StartCustomMetricsFleet(t, 1)
	hub, member := f.Hub, f.Names[0]
	t.Logf("fleet with a metrics adapter ready after %s", time.Since(start).Round(time.Millisecond))
	f.StartControlPlane(t, func(o *shared.Options) { o.FederatedHPASyncPeriod = 2 * time.Second })
	controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(member))
	testkit.MustCreate(t, hub, controllertest.Deployment(2))
	controllertest.WaitReplicas(t, f.Members, map[string]int32{member: 2})
	writePerPod(t, f, 2, "30")
	if err := f.Clusters[0].WriteCustomMetric(t.Context(), "default", "deployments.apps", "web", "queue_length", "50"); err != nil {
		t.Fatal(err)
	}

	fhpa := &autoscalingv1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, fhpa, `
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 8
  metrics:
  - type: Pods
    pods: {metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: "10"}}
  - type: External
    external: {metric: {name: `+testenv.ExternalMetricName+`}, target: {type: AverageValue, averageValue: "11"}}
  - type: Object
    object:
      describedObject: {apiVersion: apps/v1, kind: Deployment, name: web}
      metric: {name: queue_length}
      target: {type: AverageValue, averageValue: "10"}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 5}
`)
	testkit.MustCreate(t, hub, fhpa)

	t.Log("30 per pod against 10: the Pods metric asks for 6, more than the Object metric's 5 and the External metric's 4")
	controllertest.WaitReplicasWithin(t, metricsDeadline, f.Members, map[string]int32{member: 6})
	waitStatus(t, hub, fhpa, func(s autoscalingv2.HorizontalPodAutoscalerStatus) string {
		switch {
		case s.DesiredReplicas != 6 || len(s.CurrentMetrics) != 3:
			return "replicas or metrics"
		case s.CurrentMetrics[0].Pods == nil || s.CurrentMetrics[0].Pods.Current.AverageValue == nil || s.CurrentMetrics[0].Pods.Current.AverageValue.Value() != 30:
			return "the Pods metric's average of 30"
		case s.CurrentMetrics[1].External == nil || s.CurrentMetrics[1].External.Metric.Name != testenv.ExternalMetricName:
			return "the External metric"
		case s.CurrentMetrics[2].Object == nil || s.CurrentMetrics[2].Object.DescribedObject.Kind != "Deployment" || s.CurrentMetrics[2].Object.Metric.Name != "queue_length":
			return "the Object metric"
		}
		return conditions(s, map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.ScalingActive: "True/ValidMetricFound"})
	})

	t.Log("1 per pod: the Pods metric asks for the minimum, the Object metric holds 5 (the External metric asks for 4)")
	writePerPod(t, f, 6, "1")
	controllertest.WaitReplicasWithin(t, metricsDeadline, f.Members, map[string]int32{member: 5})
	waitStatus(t, hub, fhpa, func(s autoscalingv2.HorizontalPodAutoscalerStatus) string {
		switch {
		case s.DesiredReplicas != 5 || len(s.CurrentMetrics) != 3 || s.CurrentMetrics[0].Pods == nil || s.CurrentMetrics[0].Pods.Current.AverageValue.Value() != 1:
			return "5 replicas with the pods at 1"
		case s.CurrentMetrics[2].Object == nil || s.CurrentMetrics[2].Object.Current.AverageValue == nil || s.CurrentMetrics[2].Object.Current.AverageValue.Value() != 10:
			return "the Object metric's 50 over 5 replicas"
		}
		return conditions(s, map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.ScalingActive: "True/ValidMetricFound"})
	})
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// writePerPod waits until the member runs n web pods and writes value as
// each one's requests_per_second in its metrics adapter.
func writePerPod(t *testing.T, f controllertest.Fleet, n int, value string) {
	t.Helper()
	c, name := f.Clusters[0], f.Names[0]
	var pods corev1.PodList
	testkit.Eventually(t, controllertest.Deadline, "web pods in "+name, func() (bool, string) {
		if err := f.Members[name].List(t.Context(), &pods, client.InNamespace("default"), client.MatchingLabels{"app": "web"}); err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == n, "pods"
	})
	for _, p := range pods.Items {
		if err := c.WriteCustomMetric(t.Context(), "default", "pods", p.Name, "requests_per_second", value); err != nil {
			t.Fatal(err)
		}
	}
}
