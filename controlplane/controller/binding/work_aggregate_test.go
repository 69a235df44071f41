package binding

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared/worktest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

func cond(typ string, status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation}
}

// reported is a Work of generation 2 from template generation 4 whose
// Deployment was applied and observed with status.
func reported(status string, conds ...metav1.Condition) *workv1.Work {
	w := worktest.Stored(worktest.Work("east", `{}`))
	w.Generation = 2
	w.Annotations[shared.AnnotationTemplateGeneration] = "4"
	w.Status.Conditions = conds
	w.Status.ManifestStatuses = []api.ManifestStatus{{
		Identifier: api.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web", Resource: "deployments"},
		Health:     api.ResourceHealthy,
		Status:     &runtime.RawExtension{Raw: []byte(status)},
	}}
	return w
}

func TestWorkClusterStatus(t *testing.T) {
	ref := api.TemplateRefOf(sharedtest.DeploymentTemplate())
	const st = `{"generation":5,"observedGeneration":5,"readyReplicas":3}`
	applied := cond(api.ConditionWorkApplied, metav1.ConditionTrue, api.ReasonWorkApplied, "", 2)
	available := cond(api.ConditionWorkAvailable, metav1.ConditionTrue, api.ReasonWorkAvailable, "", 2)
	deleted := reported(st, applied, available)
	worktest.Deleting(deleted)
	tests := []struct {
		name string
		work *workv1.Work
		want health.ClusterStatus
	}{
		{
			name: "no work yet",
			want: health.ClusterStatus{Cluster: "east", Health: health.Unknown, AppliedMessage: "work flotilla-es-east/" + shared.WorkName(ref) + " is not created yet"},
		},
		{
			name: "applied and observed",
			work: reported(st, applied, available),
			want: health.ClusterStatus{Cluster: "east", Applied: true, Health: health.Healthy, Status: map[string]any{"observedGeneration": int64(5), "readyReplicas": int64(3)}, Generation: 5, ObservedGeneration: 5, ResourceTemplateGeneration: 4},
		},
		{
			name: "work being deleted",
			work: deleted,
			want: health.ClusterStatus{Cluster: "east", Health: health.Unknown, AppliedMessage: "work flotilla-es-east/web-abc is being deleted; it is created again once gone"},
		},
		{
			name: "not applied yet",
			work: reported(st),
			want: health.ClusterStatus{Cluster: "east", Health: health.Unknown, AppliedMessage: "waiting for work flotilla-es-east/web-abc to be applied"},
		},
		{
			name: "apply failed",
			work: reported(st, cond(api.ConditionWorkApplied, metav1.ConditionFalse, api.ReasonWorkApplyFailed, "apply Deployment default/web to cluster east: conflict", 2)),
			want: health.ClusterStatus{Cluster: "east", Health: health.Unknown, AppliedMessage: "apply Deployment default/web to cluster east: conflict"},
		},
		{
			name: "object gone from the member",
			work: reported(st, applied, cond(api.ConditionWorkAvailable, metav1.ConditionFalse, api.ReasonWorkNotFound, "Deployment default/web not found in cluster east", 2)),
			want: health.ClusterStatus{Cluster: "east", Health: health.Unknown, AppliedMessage: "Deployment default/web not found in cluster east"},
		},
		{
			name: "applied, not observed yet",
			work: reported(st, applied),
			want: health.ClusterStatus{Cluster: "east", Applied: true, Health: health.Unknown},
		},
		{
			name: "a new spec not applied yet does not count as the template's generation",
			work: reported(st, cond(api.ConditionWorkApplied, metav1.ConditionTrue, api.ReasonWorkApplied, "", 1), available),
			want: health.ClusterStatus{Cluster: "east", Applied: true, Health: health.Healthy, Status: map[string]any{"observedGeneration": int64(5), "readyReplicas": int64(3)}, Generation: 5, ObservedGeneration: 5},
		},
		{
			name: "an observation from before the apply does not count either",
			work: reported(st, applied, cond(api.ConditionWorkAvailable, metav1.ConditionTrue, api.ReasonWorkAvailable, "", 1)),
			want: health.ClusterStatus{Cluster: "east", Applied: true, Health: health.Healthy, Status: map[string]any{"observedGeneration": int64(5), "readyReplicas": int64(3)}, Generation: 5, ObservedGeneration: 5},
		},
		{
			name: "a kind without status",
			work: reported(``, applied, available),
			want: health.ClusterStatus{Cluster: "east", Applied: true, Health: health.Healthy, ResourceTemplateGeneration: 4},
		},
		{
			name: "an empty reflected status is an empty object, not none",
			work: reported(`{}`, applied, available),
			want: health.ClusterStatus{Cluster: "east", Applied: true, Health: health.Healthy, Status: map[string]any{}, ResourceTemplateGeneration: 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workClusterStatus("east", tt.work, ref)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("workClusterStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregatedItemKeepsTodaysShape(t *testing.T) {
	ref := api.TemplateRefOf(sharedtest.DeploymentTemplate())
	w := reported(`{"generation":5,"observedGeneration":5,"readyReplicas":3}`,
		cond(api.ConditionWorkApplied, metav1.ConditionTrue, api.ReasonWorkApplied, "", 2), cond(api.ConditionWorkAvailable, metav1.ConditionTrue, api.ReasonWorkAvailable, "", 2))
	got := aggregatedItem(workClusterStatus("east", w, ref))
	want := api.AggregatedStatusItem{ClusterName: "east", Applied: true, Health: api.ResourceHealthy, Status: &runtime.RawExtension{Raw: []byte(`{"observedGeneration":5,"readyReplicas":3}`)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregatedItem (-want +got):\n%s", diff)
	}
	agg := health.Aggregate(sharedtest.DeploymentTemplate(), []health.ClusterStatus{workClusterStatus("east", w, ref)})
	if agg.Status["readyReplicas"] != int64(3) || agg.Status["observedGeneration"] != int64(4) || agg.Health != health.Healthy {
		t.Errorf("aggregate over the work = %+v", agg)
	}
}

// TestEmptyStatusThroughTheWorkStatusPath follows a status reflected as an
// empty table (Karmada's VM.ReflectStatus gives {}) from the member's
// object through the Work's manifest status to the binding's aggregated
// status item and the customization's AggregateStatus: at every step it
// is an empty object, so a script that tells a member that reported
// (item.status ~= nil) from one that did not sees it reported.
func TestEmptyStatusThroughTheWorkStatusPath(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{{
		ObjectMeta: metav1.ObjectMeta{Name: "quiet"},
		Spec: api.ResourceInterpreterCustomizationSpec{
			Target: api.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"},
			Customizations: api.CustomizationRules{
				StatusReflection: &api.LuaScript{LuaScript: "function ReflectStatus(obj) return {} end"},
				StatusAggregation: &api.LuaScript{LuaScript: `function AggregateStatus(desired, items)
  desired.status = {}
  if items == nil then return desired end
  local n = 0
  for _, it in ipairs(items) do
    if it.status ~= nil then n = n + 1 end
  end
  if n > 0 then desired.status.reported = n end
  return desired
end`},
			},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	live := sharedtest.DeploymentTemplate()
	_ = unstructured.SetNestedField(live.Object, int64(3), "status", "readyReplicas")
	reflected, err := in.ReflectStatus(live)
	if err != nil || reflected == nil || len(reflected) != 0 {
		t.Fatalf("reflected %#v, %v; want an empty object", reflected, err)
	}
	raw, err := json.Marshal(reflected)
	if err != nil {
		t.Fatal(err)
	}
	ref := api.TemplateRefOf(sharedtest.DeploymentTemplate())
	cs := workClusterStatus("east", reported(string(raw),
		cond(api.ConditionWorkApplied, metav1.ConditionTrue, api.ReasonWorkApplied, "", 2), cond(api.ConditionWorkAvailable, metav1.ConditionTrue, api.ReasonWorkAvailable, "", 2)), ref)
	item := aggregatedItem(cs)
	if item.Status == nil || string(item.Status.Raw) != `{}` {
		t.Errorf("aggregated status item %+v, want status {}", item.Status)
	}
	agg, err := health.AggregateWith(in, sharedtest.DeploymentTemplate(), []health.ClusterStatus{cs})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"reported": int64(1)}, agg.Status); diff != "" {
		t.Errorf("aggregated status (-want +got):\n%s", diff)
	}
	// With no member the script's empty status table is an empty status,
	// written to the template as {}, not left as none.
	agg, err = health.AggregateWith(in, sharedtest.DeploymentTemplate(), nil)
	if err != nil || agg.Status == nil || len(agg.Status) != 0 {
		t.Errorf("aggregated status with no member %#v, %v; want an empty object", agg.Status, err)
	}
}

func TestFullyApplied(t *testing.T) {
	ok := func(gen int64) *workv1.Work {
		return reported(`{}`, cond(api.ConditionWorkApplied, metav1.ConditionTrue, api.ReasonWorkApplied, "", gen))
	}
	failed := reported(`{}`, cond(api.ConditionWorkApplied, metav1.ConditionFalse, api.ReasonWorkApplyFailed, "apply Deployment default/web to cluster west: boom", 2))
	tests := []struct {
		name    string
		placed  []string
		works   map[string]*workv1.Work
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"not scheduled", nil, nil, metav1.ConditionFalse, "NotScheduled", "the binding has no clusters"},
		{"all applied", []string{"east", "west"}, map[string]*workv1.Work{"east": ok(2), "west": ok(2)}, metav1.ConditionTrue, "FullyAppliedSuccess", "all works are applied"},
		{"one failed", []string{"east", "west"}, map[string]*workv1.Work{"east": ok(2), "west": failed}, metav1.ConditionFalse, "FullyAppliedFailed", "apply Deployment default/web to cluster west: boom"},
		{"one missing, one stale", []string{"east", "west"}, map[string]*workv1.Work{"east": ok(1)}, metav1.ConditionFalse, "Applying", "waiting for the works of cluster east, west to be applied"},
	}
	for _, tt := range tests {
		got := fullyApplied(tt.placed, tt.works)
		if got.Status != tt.status || got.Reason != tt.reason || got.Message != tt.message || got.Type != api.ConditionFullyApplied {
			t.Errorf("%s: fullyApplied = %+v, want %s %s %q", tt.name, got, tt.status, tt.reason, tt.message)
		}
	}
}
