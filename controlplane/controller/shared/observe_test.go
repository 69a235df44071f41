package shared

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
)

func TestClusterFailovers(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	added := metav1.NewTime(t0.Add(-time.Minute))
	noExec := corev1.Taint{Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	noSched := corev1.Taint{Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}
	fleet := map[string]*api.Cluster{"a": sharedtest.Tainted("a", noExec), "b": sharedtest.Tainted("b"), "c": sharedtest.Tainted("c", noSched)}
	all := []api.TargetCluster{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	for _, tc := range []struct {
		name        string
		prev, next  []api.TargetCluster
		tolerations []corev1.Toleration
		want        map[string]string
	}{
		{name: "leaving a NoExecute cluster is a failover", prev: all, next: all[1:],
			want: map[string]string{"a": api.TaintClusterNotReady + ":NoExecute"}},
		{name: "leaving a NoSchedule or untainted cluster is not", prev: all, next: all[:1], want: map[string]string{}},
		{name: "staying on a NoExecute cluster is not", prev: all, next: all, want: map[string]string{}},
		{name: "a tolerated taint is not", prev: all, next: all[1:], want: map[string]string{},
			tolerations: []corev1.Toleration{{Key: api.TaintClusterNotReady, Operator: corev1.TolerationOpExists}}},
		{name: "a cluster gone from the fleet is not", prev: []api.TargetCluster{{Name: "gone"}}, want: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ClusterFailovers(tc.prev, tc.next, fleet, tc.tolerations, t0)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestBindingState(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "R"}
	}
	for _, tc := range []struct {
		conds []metav1.Condition
		want  string
	}{
		{nil, BindingStateUnscheduled},
		{[]metav1.Condition{cond(api.ConditionScheduled, metav1.ConditionFalse)}, BindingStateUnschedulable},
		{[]metav1.Condition{cond(api.ConditionScheduled, metav1.ConditionTrue)}, BindingStateScheduled},
		{[]metav1.Condition{cond(api.ConditionScheduled, metav1.ConditionTrue), cond(api.ConditionFullyApplied, metav1.ConditionFalse)}, BindingStateScheduled},
		{[]metav1.Condition{cond(api.ConditionScheduled, metav1.ConditionTrue), cond(api.ConditionFullyApplied, metav1.ConditionTrue)}, BindingStateFullyApplied},
		// A stale FullyApplied does not hide a failed schedule.
		{[]metav1.Condition{cond(api.ConditionScheduled, metav1.ConditionFalse), cond(api.ConditionFullyApplied, metav1.ConditionTrue)}, BindingStateUnschedulable},
	} {
		rb := &workv1.ResourceBinding{}
		rb.Status.Conditions = tc.conds
		if got := bindingState(rb); got != tc.want {
			t.Errorf("bindingState(%v) = %s, want %s", tc.conds, got, tc.want)
		}
	}
}
