package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
)

func podsSpec(target string) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse(target))}}}
}

func objectSpec(target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "web"},
		Metric:          autoscalingv2.MetricIdentifier{Name: "requests_per_second"}, Target: target}}
}

func externalSpec(target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue_messages_ready", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}},
		Target: target}}
}

func value(q string) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse(q))}
}

func averageValue(q string) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse(q))}
}

func perPodOf(v map[string]int64) []memberMetric {
	out := map[string]autoscale.PodMetric{}
	for k, m := range v {
		out[k] = autoscale.PodMetric{Value: m, Timestamp: now, Window: time.Minute}
	}
	return []memberMetric{{PerPod: out}}
}

var errMemberNotServing = fmt.Errorf("custom.metrics.k8s.io is %w by the member (no APIService registers an adapter for it)", errNotServed)

// TestProposeCustomAndExternal runs Pods, Object and External metrics
// from the members' readings through merge and propose, as a pass does.
func TestProposeCustomAndExternal(t *testing.T) {
	calc := autoscale.Calculator{}
	east := func(m []memberMetric) memberSample {
		return memberSample{Cluster: "east", Pods: []corev1.Pod{pod("web-1", "100m"), pod("web-2", "100m")}, Metrics: m}
	}
	west := func(m []memberMetric) memberSample {
		return memberSample{Cluster: "west", Pods: []corev1.Pod{pod("web-1", "100m"), pod("web-2", "100m")}, Metrics: m}
	}
	found := func(v int64) []memberMetric { return []memberMetric{{Value: v, Found: true}} }
	for _, tc := range []struct {
		name          string
		spec          autoscalingv2.MetricSpec
		members       []memberSample
		current       int32
		want          int32
		reason        string
		status        string
		unansweredHas string
	}{
		{name: "pods metric: average 20 of a target 10 over both members doubles", spec: podsSpec("10"), current: 4,
			members: []memberSample{east(perPodOf(map[string]int64{"web-1": 20000, "web-2": 20000})), west(perPodOf(map[string]int64{"web-1": 20000, "web-2": 20000}))},
			want:    8, status: "20"},
		{name: "pods metric: a member without custom.metrics.k8s.io counts as missing and damps the scale-up", spec: podsSpec("10"), current: 4,
			members: []memberSample{east(perPodOf(map[string]int64{"web-1": 30000, "web-2": 30000})), west([]memberMetric{{Err: errMemberNotServing}})},
			want:    6, status: "30", unansweredHas: "west: custom.metrics.k8s.io is not served"},
		{name: "pods metric: a member without custom.metrics.k8s.io holds a small scale-down", spec: podsSpec("10"), current: 4,
			members: []memberSample{east(perPodOf(map[string]int64{"web-1": 8500, "web-2": 8500})), west([]memberMetric{{Err: errMemberNotServing}})},
			want:    4, status: "8500m", unansweredHas: "west: custom.metrics.k8s.io is not served"},
		{name: "pods metric: no member serves it", spec: podsSpec("10"), current: 4,
			members: []memberSample{east([]memberMetric{{Err: errMemberNotServing}}), west([]memberMetric{{Err: errMemberNotServing}})},
			want:    4, reason: "FailedGetPodsMetric"},
		{name: "object metric, value: the members' values summed over the ready pods", spec: objectSpec(value("100")), current: 4,
			members: []memberSample{east(found(150000)), west(found(150000))},
			want:    12, status: "300"},
		{name: "object metric, value: the object only in one member", spec: objectSpec(value("100")), current: 4,
			members: []memberSample{east(found(50000)), west([]memberMetric{{}})},
			want:    2, status: "50"},
		{name: "object metric, value: a member not serving never lets it scale down", spec: objectSpec(value("100")), current: 4,
			members: []memberSample{east(found(50000)), west([]memberMetric{{Err: errMemberNotServing}})},
			want:    4, status: "50", unansweredHas: "west: custom.metrics.k8s.io"},
		{name: "object metric, average value: ceil(sum/target)", spec: objectSpec(averageValue("10")), current: 4,
			members: []memberSample{east(found(35000)), west(found(35000))},
			want:    7, status: "17500m"},
		{name: "object metric: no member reports it", spec: objectSpec(value("100")), current: 4,
			members: []memberSample{east([]memberMetric{{}}), west([]memberMetric{{}})}, want: 4, reason: "FailedGetObjectMetric"},
		{name: "external metric, average value: the queue's series summed", spec: externalSpec(averageValue("30")), current: 2,
			members: []memberSample{east(found(90000)), west(found(60000))},
			want:    5, status: "75"},
		{name: "external metric, value, within the tolerance", spec: externalSpec(value("100")), current: 4,
			members: []memberSample{east(found(60000)), west(found(45000))},
			want:    4, status: "105"},
		{name: "external metric: an unreachable member never lets it scale down", spec: externalSpec(averageValue("30")), current: 4,
			members: []memberSample{east(found(30000)), {Cluster: "west", Scheduled: 2, Err: errors.New("dial tcp: connection refused")}},
			want:    4, status: "7500m", unansweredHas: "west: dial tcp"},
		{name: "external metric: an unreachable member still lets it scale up", spec: externalSpec(averageValue("30")), current: 2,
			members: []memberSample{east(found(150000)), {Cluster: "west", Scheduled: 1, Err: errors.New("dial tcp: connection refused")}},
			want:    5, status: "75", unansweredHas: "west: dial tcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := merge(tc.members, []corev1.Container{{Name: "c"}}, 1)
			p := propose(calc, []autoscalingv2.MetricSpec{tc.spec}, scaleCounts{Current: tc.current, Status: tc.current}, s, now)
			if p.Replicas != tc.want {
				t.Errorf("replicas %d, want %d (%+v)", p.Replicas, tc.want, p)
			}
			if tc.reason != "" {
				if p.Active || p.Invalid == nil || p.Invalid.Reason != tc.reason {
					t.Errorf("proposal %+v, want no proposal with reason %s", p, tc.reason)
				}
				return
			}
			if !p.Active || len(p.Statuses) != 1 {
				t.Fatalf("proposal %+v, want one metric status", p)
			}
			if got := currentOf(p.Statuses[0]); got != tc.status {
				t.Errorf("current %s, want %s", got, tc.status)
			}
			msg := strings.Join(s.Unanswered, "; ")
			if tc.unansweredHas != "" && !strings.Contains(msg, tc.unansweredHas) {
				t.Errorf("unanswered %q does not name %q", msg, tc.unansweredHas)
			}
			if tc.unansweredHas == "" && msg != "" {
				t.Errorf("unanswered %q", msg)
			}
			// What a pass writes: ScalingActive names the member.
			d := decide(api.FederatedHPASpec{MaxReplicas: 20}, tc.current, p, s.Unanswered, &history{}, now)
			for _, c := range d.Conditions {
				if c.Type == autoscalingv2.ScalingActive && tc.unansweredHas != "" && !strings.Contains(c.Message, tc.unansweredHas) {
					t.Errorf("ScalingActive %q does not name %q", c.Message, tc.unansweredHas)
				}
			}
		})
	}
}

// currentOf is the metric status's current value or average value.
func currentOf(s autoscalingv2.MetricStatus) string {
	var v autoscalingv2.MetricValueStatus
	switch {
	case s.Pods != nil:
		v = s.Pods.Current
	case s.Object != nil:
		v = s.Object.Current
	case s.External != nil:
		v = s.External.Current
	}
	switch {
	case v.Value != nil:
		return v.Value.String()
	case v.AverageValue != nil:
		return v.AverageValue.String()
	}
	return "none"
}

func TestPerPodDropsPodsNotListed(t *testing.T) {
	item := func(name, v string, window *int64) custommetricsv1beta2.MetricValue {
		return custommetricsv1beta2.MetricValue{DescribedObject: corev1.ObjectReference{Kind: "Pod", Name: name}, Value: resource.MustParse(v),
			Timestamp: metav1.NewTime(now), WindowSeconds: window}
	}
	got := perPod([]custommetricsv1beta2.MetricValue{item("web-1", "25", ptr.To[int64](30)), item("web-2", "7", nil), item("other", "900", nil)},
		[]corev1.Pod{pod("web-1", "100m"), pod("web-2", "100m")})
	if len(got) != 2 || got["web-1"].Value != 25000 || got["web-1"].Window != 30*time.Second || got["web-2"].Window != time.Minute {
		t.Fatalf("per pod %+v", got)
	}
}

// TestSampleMembersBoundsConcurrency: the fan-out never reads more than
// maxMemberReads members at once, reads every member once, and a member
// that stalls is cut at the timeout without holding the others.
func TestSampleMembersBoundsConcurrency(t *testing.T) {
	var running, peak atomic.Int32
	read := func(ctx context.Context, cluster string) memberSample {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if cluster == "m-007" {
			<-ctx.Done()
			return memberSample{Err: ctx.Err()}
		}
		time.Sleep(2 * time.Millisecond)
		return memberSample{Pods: []corev1.Pod{}}
	}
	clusters := make([]api.TargetCluster, 100)
	for i := range clusters {
		clusters[i] = api.TargetCluster{Name: fmt.Sprintf("m-%03d", i), Replicas: 1}
	}
	start := time.Now()
	got := sampleMembers(t.Context(), read, clusters, 300*time.Millisecond)
	took := time.Since(start)
	if p := peak.Load(); p > maxMemberReads || p < 2 {
		t.Errorf("peak of %d reads at once, want 2..%d", p, maxMemberReads)
	}
	for i, s := range got {
		if s.Cluster != clusters[i].Name || s.Scheduled != 1 {
			t.Fatalf("sample %d is %+v", i, s)
		}
		if (s.Err != nil) != (s.Cluster == "m-007") {
			t.Errorf("%s: err %v", s.Cluster, s.Err)
		}
	}
	if took > 2*time.Second {
		t.Errorf("the fan-out took %s with one member stalled at a 300 ms timeout", took)
	}
}
