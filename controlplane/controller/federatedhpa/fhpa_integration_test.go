package federatedhpa_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// metricsDeadline bounds the waits that need fresh samples: metrics-server
// scrapes every testenv.MetricResolution and needs two scrapes for a cpu
// rate, and a cpu sample counts only once taken a window after the pod
// became ready.
const metricsDeadline = 60 * time.Second

// TestFederatedHPAScalesOnMemberMetrics runs the control plane over two
// Full members whose metrics.k8s.io is real metrics-server scraping kwok:
// the web pods use 400m of their 100m cpu request (400%, target 100%), so
// the FederatedHPA scales the template from 2 to its maximum of 6, which
// the scheduler divides 3 and 3, with status and conditions saying so;
// then the member pods' usage falls to 10m and, after the 5 s scale-down
// window, it scales down to its minimum of 2. A ContainerResource metric
// of the web container, beside the pods' cpu, reads metrics-server's
// per-container usage and reports its own status each way. A pod in another namespace
// of a member that copies the web labels and uses 8 cpus is never
// counted: counted, it would hold the utilization far above the target
// and the scale-down would not come. When a member stops answering, the
// ScalingActive condition names it while the other member's pods still
// give a replica count. A Pods metric added then is read from the
// remaining member's custom.metrics.k8s.io, which it does not serve: the
// member is named for it, and cpu still decides.
func TestFederatedHPAScalesOnMemberMetrics(t *testing.T) {
	start := time.Now()
	f := controllertest.StartMetricsFleet(t, 2)
	hub := f.Hub
	east, west := f.Names[0], f.Names[1]
	t.Logf("fleet with metrics ready after %s", time.Since(start).Round(time.Millisecond))
	f.StartControlPlane(t, func(o *shared.Options) { o.FederatedHPASyncPeriod = 2 * time.Second })
	controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(east, west).Divided(api.ReplicaDivisionPreferenceWeighted).Weight(1, east).Weight(1, west))
	web := controllertest.Deployment(2)
	web.Spec.Template.Annotations = map[string]string{testenv.UsageCPUAnnotation: "400m"}
	web.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	testkit.MustCreate(t, hub, web)
	controllertest.WaitReplicas(t, f.Members, map[string]int32{east: 1, west: 1})

	t.Log("a tenant's pod in another namespace of a member copies the web labels and burns 8 cpus")
	forge(t, f.Members[east])

	fhpa := &autoscalingv1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, fhpa, `
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 6
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 100}}
  - type: ContainerResource
    containerResource: {name: cpu, container: web, target: {type: Utilization, averageUtilization: 100}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 5}
`)
	testkit.MustCreate(t, hub, fhpa)

	t.Log("usage at 400% of the request: the template goes to its maximum at once, divided 3 and 3")
	controllertest.WaitReplicasWithin(t, metricsDeadline, f.Members, map[string]int32{east: 3, west: 3})
	waitStatus(t, hub, fhpa, func(s autoscalingv2.HorizontalPodAutoscalerStatus) string {
		switch {
		case s.DesiredReplicas != 6 || s.CurrentReplicas != 6 || s.LastScaleTime == nil:
			return "replicas"
		case len(s.CurrentMetrics) != 2 || s.CurrentMetrics[0].Resource == nil || ptr.Deref(s.CurrentMetrics[0].Resource.Current.AverageUtilization, 0) < 150:
			return "current metrics"
		case s.CurrentMetrics[1].ContainerResource == nil || s.CurrentMetrics[1].ContainerResource.Container != "web" ||
			ptr.Deref(s.CurrentMetrics[1].ContainerResource.Current.AverageUtilization, 0) < 150:
			return "container web's current metric"
		}
		return conditions(s, map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
			autoscalingv2.AbleToScale: "True", autoscalingv2.ScalingActive: "True/ValidMetricFound", autoscalingv2.ScalingLimited: "True/TooManyReplicas",
		})
	})
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: api.KindFederatedHPA, Name: "web", Reason: "SuccessfulRescale", Type: "Normal", Note: "above target"},
	})
	m := scrape(t)
	wantAtLeast(t, m, `flotilla_federatedhpa_decisions_total{name="web",namespace="default",result="scale_up"}`, 1)
	wantAtLeast(t, m, `flotilla_federatedhpa_desired_replicas{name="web",namespace="default"}`, 6)
	wantAtLeast(t, m, `flotilla_federatedhpa_current_replicas{name="web",namespace="default"}`, 2)
	for _, name := range f.Names {
		wantAtLeast(t, m, `flotilla_federatedhpa_member_read_duration_seconds_count{member_cluster="`+name+`",result="success"}`, 1)
	}

	t.Log("usage falls to 10m in every member: after the window, down to the minimum of 2")
	for _, name := range f.Names {
		setUsage(t, f.Members[name], "10m")
	}
	controllertest.WaitReplicasWithin(t, metricsDeadline, f.Members, map[string]int32{east: 1, west: 1})
	waitStatus(t, hub, fhpa, func(s autoscalingv2.HorizontalPodAutoscalerStatus) string {
		if s.DesiredReplicas != 2 || len(s.CurrentMetrics) != 2 || ptr.Deref(s.CurrentMetrics[0].Resource.Current.AverageUtilization, 100) > 20 ||
			s.CurrentMetrics[1].ContainerResource == nil || ptr.Deref(s.CurrentMetrics[1].ContainerResource.Current.AverageUtilization, 100) > 20 {
			return "replicas or metrics"
		}
		return conditions(s, map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{
			autoscalingv2.ScalingActive: "True/ValidMetricFound", autoscalingv2.ScalingLimited: "True/TooFewReplicas",
		})
	})
	wantAtLeast(t, scrape(t), `flotilla_federatedhpa_decisions_total{name="web",namespace="default",result="scale_down"}`, 1)

	t.Log("a member stops answering: named in ScalingActive, and the other member's pods still decide")
	f.Clusters[1].StopAPIServer()
	waitStatus(t, hub, fhpa, func(s autoscalingv2.HorizontalPodAutoscalerStatus) string {
		for _, c := range s.Conditions {
			if c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "members without metrics") && strings.Contains(c.Message, west+":") {
				return ""
			}
		}
		return "ScalingActive naming " + west
	})
	m = scrape(t)
	wantAtLeast(t, m, `flotilla_federatedhpa_member_read_errors_total{member_cluster="`+west+`",name="web",namespace="default"}`, 1)
	wantAtLeast(t, m, `flotilla_federatedhpa_member_read_duration_seconds_count{member_cluster="`+west+`",result="error"}`, 1)
	if v, ok := m[`flotilla_federatedhpa_member_read_errors_total{member_cluster="`+east+`",name="web",namespace="default"}`]; ok && v > 0 {
		t.Errorf("read errors counted for %s, which answered every pass: %v", east, v)
	}

	t.Log("a Pods metric beside cpu: the member that answers serves no custom.metrics.k8s.io, and is named for it")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(fhpa), fhpa, func() {
		fhpa.Spec.Metrics = append(fhpa.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}})
	})
	waitStatus(t, hub, fhpa, func(s autoscalingv2.HorizontalPodAutoscalerStatus) string {
		for _, c := range s.Conditions {
			if c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionTrue &&
				strings.Contains(c.Message, east+": pods metric requests_per_second: custom.metrics.k8s.io is not served by the member") &&
				strings.Contains(c.Message, "invalid: pods metric requests_per_second") {
				return ""
			}
		}
		return "ScalingActive naming " + east + " for custom.metrics.k8s.io"
	})
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// forge creates namespace tenant and, in it, a pod with web's labels that
// uses 8 cpus of a 100m request.
func forge(t *testing.T, member client.Client) {
	t.Helper()
	testkit.MustCreate(t, member, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}})
	testkit.MustCreate(t, member, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "web-forged", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{testenv.UsageCPUAnnotation: "8"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
	})
}

// setUsage sets the cpu usage of the web pods in a member (kwok reads it
// from their annotation at each scrape).
func setUsage(t *testing.T, member client.Client, cpu string) {
	t.Helper()
	var pods corev1.PodList
	if err := member.List(t.Context(), &pods, client.InNamespace("default"), client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		testkit.MustUpdate(t, member, client.ObjectKeyFromObject(p), p, func() {
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations[testenv.UsageCPUAnnotation] = cpu
		})
	}
}

// waitStatus waits until check, over the FederatedHPA's status, returns "".
func waitStatus(t *testing.T, hub client.Client, fhpa *autoscalingv1.FederatedHPA, check func(autoscalingv2.HorizontalPodAutoscalerStatus) string) {
	t.Helper()
	testkit.Eventually(t, metricsDeadline, "FederatedHPA status", func() (bool, string) {
		if err := hub.Get(t.Context(), client.ObjectKeyFromObject(fhpa), fhpa); err != nil {
			return false, err.Error()
		}
		if bad := check(fhpa.Status); bad != "" {
			return false, fmt.Sprintf("%s: %+v", bad, fhpa.Status)
		}
		return true, ""
	})
}

// conditions is "" when every wanted condition has the status (and, when
// given as "Status/Reason", the reason); else what differs.
func conditions(s autoscalingv2.HorizontalPodAutoscalerStatus, want map[autoscalingv2.HorizontalPodAutoscalerConditionType]string) string {
	for typ, w := range want {
		got := "absent"
		for _, c := range s.Conditions {
			if c.Type == typ {
				got = string(c.Status)
				if len(w) > len(got) {
					got += "/" + c.Reason
				}
			}
		}
		if got != w {
			return fmt.Sprintf("condition %s is %s, want %s", typ, got, w)
		}
	}
	return ""
}

// scrape reads the control plane's metrics as its endpoint serves them
// (controller-runtime's registry, in Prometheus' text format): series
// line to value.
func scrape(t *testing.T) map[string]float64 {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "flotilla_federatedhpa_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("series %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// wantAtLeast fails unless the scraped series is present and at least least.
func wantAtLeast(t *testing.T, m map[string]float64, series string, least float64) {
	t.Helper()
	v, ok := m[series]
	if !ok || v < least {
		t.Errorf("%s = %v (present %v), want at least %v", series, v, ok, least)
	}
}
