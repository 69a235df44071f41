package clusterstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

func TestNextTaints(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(t0.Add(-time.Hour))
	now := metav1.NewTime(t0)
	ready := func(s metav1.ConditionStatus, since time.Duration) *metav1.Condition {
		return &metav1.Condition{Type: api.ClusterConditionReady, Status: s, LastTransitionTime: metav1.NewTime(t0.Add(-since))}
	}
	user := corev1.Taint{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name     string
		current  []corev1.Taint
		ready    *metav1.Condition
		want     []corev1.Taint
		wantWait time.Duration
	}{
		{name: "ready keeps user taints", current: []corev1.Taint{user}, ready: ready(metav1.ConditionTrue, 0), want: []corev1.Taint{user}},
		{name: "not ready gets NoSchedule at once", current: []corev1.Taint{user}, ready: ready(metav1.ConditionFalse, time.Second),
			want: []corev1.Taint{user, {Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now}}, wantWait: time.Minute - time.Second},
		{name: "NoExecute after the grace, NoSchedule kept as it was",
			current: []corev1.Taint{{Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &earlier}}, ready: ready(metav1.ConditionFalse, time.Minute),
			want: []corev1.Taint{{Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &earlier}, {Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now}}},
		{name: "unknown is unreachable", ready: ready(metav1.ConditionUnknown, 0),
			want: []corev1.Taint{{Key: api.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now}}, wantWait: time.Minute},
		{name: "ready again clears both", current: []corev1.Taint{{Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}, user, {Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}},
			ready: ready(metav1.ConditionTrue, 0), want: []corev1.Taint{user}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, wait := nextTaints(tt.current, tt.ready, t0, time.Minute)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if wait != tt.wantWait {
				t.Errorf("wait = %v, want %v", wait, tt.wantWait)
			}
		})
	}
}

func TestNextStatusThresholds(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := shared.Options{FailureThreshold: 30 * time.Second, SuccessThreshold: 10 * time.Second}
	cond := func(s metav1.ConditionStatus) api.ClusterStatus {
		return api.ClusterStatus{KubernetesVersion: "v1.35.0", Conditions: []metav1.Condition{{Type: api.ClusterConditionReady, Status: s, Reason: "R"}}}
	}
	down := api.ClusterStatus{Conditions: []metav1.Condition{{Type: api.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: api.ReasonClusterNotReachable}}}
	tests := []struct {
		name    string
		current api.ClusterStatus
		probed  api.ClusterStatus
		ready   bool
		since   time.Duration
		want    metav1.ConditionStatus
	}{
		{name: "first probe is taken at once", probed: down, want: metav1.ConditionFalse},
		{name: "failure within the threshold is ignored", current: cond(metav1.ConditionTrue), probed: down, since: 29 * time.Second, want: metav1.ConditionTrue},
		{name: "failure past the threshold flips", current: cond(metav1.ConditionTrue), probed: down, since: 30 * time.Second, want: metav1.ConditionFalse},
		{name: "success within its threshold is ignored", current: cond(metav1.ConditionFalse), probed: cond(metav1.ConditionTrue), ready: true, since: 9 * time.Second, want: metav1.ConditionFalse},
		{name: "success past its threshold flips", current: cond(metav1.ConditionFalse), probed: cond(metav1.ConditionTrue), ready: true, since: 10 * time.Second, want: metav1.ConditionTrue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := shared.NextStatus(tt.current, tt.probed, tt.ready, t0.Add(-tt.since), t0, opts)
			if len(got.Conditions) != 1 || got.Conditions[0].Status != tt.want {
				t.Fatalf("conditions = %+v, want Ready=%s", got.Conditions, tt.want)
			}
			if !tt.ready && tt.want == metav1.ConditionFalse && tt.current.KubernetesVersion != got.KubernetesVersion {
				t.Errorf("a failed probe dropped the known facts: version %q", got.KubernetesVersion)
			}
		})
	}
}
