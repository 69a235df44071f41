package clusterstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

func TestPullStatus(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	renewed := metav1.NewMicroTime(t0.Add(-time.Hour)) // the agent's clock may be off: only seen counts
	seen := func(ago time.Duration) agentLease {
		return agentLease{renewTime: &renewed, duration: 40 * time.Second, seen: t0.Add(-ago)}
	}
	reported := api.ClusterStatus{KubernetesVersion: "v1.35.4", Conditions: []metav1.Condition{
		{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: api.ReasonClusterReady, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))},
	}}
	unknown := func(facts api.ClusterStatus, msg string) api.ClusterStatus {
		facts.Conditions = []metav1.Condition{
			{Type: api.ClusterConditionReady, Status: metav1.ConditionUnknown, Reason: ReasonClusterStatusUnknown, Message: msg, LastTransitionTime: metav1.NewTime(t0)},
		}
		return facts
	}
	never := "no agent has renewed lease flotilla-cluster/edge of cluster edge"
	unknownEarlier := unknown(reported, "earlier")
	unknownEarlier.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(-time.Minute))
	tests := []struct {
		name     string
		current  api.ClusterStatus
		lease    agentLease
		want     api.ClusterStatus
		wantLeft time.Duration
	}{
		{name: "a lease renewed within its duration keeps what the agent wrote", current: reported, lease: seen(10 * time.Second), want: reported, wantLeft: 30 * time.Second},
		{name: "an expired lease turns Ready Unknown and keeps the facts", current: reported, lease: seen(41 * time.Second),
			want: unknown(reported, "the agent of cluster edge has not renewed lease flotilla-cluster/edge for 41s (last renewal 2024-12-31T23:00:00Z, duration 40s)")},
		{name: "no renewal at all", current: api.ClusterStatus{}, want: unknown(api.ClusterStatus{}, never)},
		{name: "already Unknown: nothing is rewritten", current: unknownEarlier, lease: seen(time.Hour), want: unknownEarlier},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, left := pullStatus("edge", tt.current, tt.lease, t0)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if left != tt.wantLeft {
				t.Errorf("time left = %v, want %v", left, tt.wantLeft)
			}
		})
	}
}

// TestObserveLease: expiry counts from when this process first saw a
// renewal, so a restarted control plane gives each agent a full lease.
func TestObserveLease(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &clusterReconciler{renewals: map[string]agentLease{}}
	lease := func(renewed time.Time) *coordinationv1.Lease {
		at := metav1.NewMicroTime(renewed)
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &at, LeaseDurationSeconds: ptr.To(int32(40))}}
	}
	old := lease(t0.Add(-time.Hour))
	steps := []struct {
		name     string
		lease    *coordinationv1.Lease
		at       time.Time
		wantSeen time.Time
	}{
		{name: "a renewal from long ago, first seen now", lease: old, at: t0, wantSeen: t0},
		{name: "the same renewal later keeps when it was seen", lease: old, at: t0.Add(time.Minute), wantSeen: t0},
		{name: "a new renewal is seen anew", lease: lease(t0), at: t0.Add(2 * time.Minute), wantSeen: t0.Add(2 * time.Minute)},
		{name: "a lease never renewed", lease: &coordinationv1.Lease{}, at: t0.Add(3 * time.Minute)},
		{name: "no lease", at: t0.Add(4 * time.Minute)},
	}
	for _, s := range steps {
		got := r.observeLease("edge", s.lease, s.at)
		if !got.seen.Equal(s.wantSeen) || (s.lease != nil && s.lease.Spec.RenewTime != nil && got.duration != 40*time.Second) {
			t.Errorf("%s: seen %v, duration %v; want seen %v", s.name, got.seen, got.duration, s.wantSeen)
		}
	}
}
