package federatedhpa

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
)

const (
	benchMembers = 100
	benchPods    = 50
	// benchMemberLatency stands for one member's reads (pods, then pod
	// metrics) over a WAN link: the fan-out's figure is how many of them
	// the concurrency bound serialises.
	benchMemberLatency = 20 * time.Millisecond
)

// benchSamples is 100 members' answers of 50 pods each, cpu at 150% of
// the request on one member in ten and 90% elsewhere, with one member
// unreachable.
func benchSamples() []memberSample {
	out := make([]memberSample, benchMembers)
	for m := range out {
		cluster := fmt.Sprintf("member-%03d", m)
		if m == benchMembers-1 {
			out[m] = memberSample{Cluster: cluster, Scheduled: benchPods, Err: context.DeadlineExceeded}
			continue
		}
		pods := make([]corev1.Pod, benchPods)
		usage := make(map[string]autoscale.PodMetric, benchPods)
		for i := range pods {
			pods[i] = pod(fmt.Sprintf("web-%d", i), "100m")
			v := int64(90)
			if m%10 == 0 {
				v = 150
			}
			usage[pods[i].Name] = cpu(v)
		}
		out[m] = memberSample{Cluster: cluster, Pods: pods, Metrics: []memberMetric{{PerPod: usage}}}
	}
	return out
}

// BenchmarkFederatedHPADecision is one decision over 100 members x 50
// pods: "compute" merges the members' samples and computes the replicas
// (pure); "fanout" reads the 100 members through the bounded fan-out,
// each member read standing in for benchMemberLatency of network and
// apiserver time (real member apiservers at this count are too heavy
// for this machine), so its figure is the fan-out's, not a member's.
func BenchmarkFederatedHPADecision(b *testing.B) {
	specs := []autoscalingv2.MetricSpec{utilization(80)}
	// The template's containers, requesting cpu, stand for the
	// unreachable member's pods.
	containers := pod("template", "100m").Spec.Containers
	b.Run(fmt.Sprintf("members=%d/pods=%d/compute", benchMembers, benchPods), func(b *testing.B) {
		samples := benchSamples()
		current := int32(benchMembers * benchPods)
		calc := autoscale.Calculator{}
		durations := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			s := merge(slices.Clone(samples), containers, len(specs))
			p := propose(calc, specs, scaleCounts{Current: current, Status: current}, s, now)
			durations = append(durations, time.Since(start))
			// 9 members in 10 at 90% and 1 at 150% of an 80% target,
			// the unreachable member's pods at 0 on the scale-up.
			if !p.Active || p.Replicas <= current || len(s.Unanswered) != 1 {
				b.Fatalf("proposal %+v, unanswered %v", p, s.Unanswered)
			}
		}
		reportPercentiles(b, durations)
	})
	b.Run(fmt.Sprintf("members=%d/fanout", benchMembers), func(b *testing.B) {
		clusters := make([]api.TargetCluster, benchMembers)
		for i := range clusters {
			clusters[i] = api.TargetCluster{Name: fmt.Sprintf("member-%03d", i), Replicas: benchPods}
		}
		read := func(ctx context.Context, _ string) memberSample {
			select {
			case <-time.After(benchMemberLatency):
			case <-ctx.Done():
			}
			return memberSample{Pods: []corev1.Pod{}}
		}
		durations := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			got := sampleMembers(b.Context(), read, clusters, time.Second)
			durations = append(durations, time.Since(start))
			if len(got) != benchMembers {
				b.Fatalf("%d samples", len(got))
			}
		}
		reportPercentiles(b, durations)
		b.ReportMetric(float64(maxMemberReads), "concurrent-reads")
	})
}

// reportPercentiles reports the p50 and p99 of samples in µs.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds()), "p99-µs")
}
