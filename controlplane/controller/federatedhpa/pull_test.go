package federatedhpa

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
)

// TestPullMembersAreNamedNotMeasured: a pull-mode member of the binding
// is never read (the control plane has no route to it), its scheduled
// replicas count as pods with missing metrics (on this scale-down at the
// request, so the fleet goes from 4 to 3 and not to the 1 that east's
// pods alone would give), and the ScalingActive condition names it as a
// pull-mode member whose pods are not measured, beside a push member
// that failed for its own reason.
func TestPullMembersAreNamedNotMeasured(t *testing.T) {
	var mu sync.Mutex
	var contacted []string
	read := func(_ context.Context, cluster string) memberSample {
		mu.Lock()
		contacted = append(contacted, cluster)
		mu.Unlock()
		switch cluster {
		case "east":
			return memberSample{Pods: []corev1.Pod{pod("web-1", "100m"), pod("web-2", "100m")}, Metrics: cpuSample(map[string]int64{"web-1": 10, "web-2": 10})}
		case "west":
			return memberSample{Err: errors.New("connection refused")}
		}
		// What reaching a pull member ends in: it has no credentials.
		return memberSample{Err: errors.New("cluster " + cluster + ": no credentials")}
	}
	clusters := []api.TargetCluster{{Name: "east", Replicas: 2}, {Name: "north", Replicas: 2}, {Name: "west", Replicas: 0}}
	samples := sampleMembers(t.Context(), skipPull(map[string]bool{"north": true}, read), clusters, time.Second)
	if strings.Join(contacted, ",") != "east,west" && strings.Join(contacted, ",") != "west,east" {
		t.Errorf("members contacted: %v, want east and west only (north is a pull member)", contacted)
	}
	fleet := merge(samples, pod("template", "100m").Spec.Containers, 1)
	specs := []autoscalingv2.MetricSpec{utilization(100)}
	p := propose(autoscale.Calculator{}, specs, scaleCounts{Current: 4, Status: 4}, fleet, now)
	if !p.Active || p.Replicas != 3 {
		t.Errorf("proposal %+v, want 3 (north's two pods counted at their request on a scale-down)", p)
	}
	d := decide(api.FederatedHPASpec{MaxReplicas: 10}, 4, p, fleet.Unanswered, &history{}, now)
	var msg string
	for _, c := range d.Conditions {
		if c.Type == autoscalingv2.ScalingActive {
			msg = c.Message
		}
	}
	for _, want := range []string{"north: pull-mode member: its pods are not measured", "west: connection refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ScalingActive message %q does not say %q", msg, want)
		}
	}
}
