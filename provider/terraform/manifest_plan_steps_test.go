package terraform

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

func stepDeployment(apiVersion, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind("Deployment")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

// TestPlanIdentity checks the id step: the id follows the template, and
// only a changed group, kind, namespace or name replaces the resource.
func TestPlanIdentity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		template    *unstructured.Unstructured
		hasState    bool
		recordedID  string
		wantID      string
		wantReplace bool
	}{
		{"template not known yet: nothing set", nil, true, "apps/v1, Kind=Deployment, default/web", "", false},
		{"a new resource", stepDeployment("apps/v1", "web"), false, "", "apps/v1, Kind=Deployment, default/web", false},
		{"unchanged", stepDeployment("apps/v1", "web"), true, "apps/v1, Kind=Deployment, default/web", "apps/v1, Kind=Deployment, default/web", false},
		{"a new version of the same kind", stepDeployment("apps/v1", "web"), true, "apps/v1beta2, Kind=Deployment, default/web", "apps/v1, Kind=Deployment, default/web", false},
		{"a new name replaces", stepDeployment("apps/v1", "api"), true, "apps/v1, Kind=Deployment, default/web", "apps/v1, Kind=Deployment, default/api", true},
		{"imported without an id", stepDeployment("apps/v1", "web"), true, "", "apps/v1, Kind=Deployment, default/web", false},
	}
	for _, tc := range tests {
		set := map[string]tftypes.Value{}
		m := manifestRequest{in: manifestInputs{template: tc.template}, hasState: tc.hasState, recorded: manifestRecord{id: tc.recordedID}}
		replace := planIdentity(m, set)
		if got := rawString(set[attrID]); got != tc.wantID || replace != tc.wantReplace {
			t.Errorf("%s: id %q, replace %v; want %q, %v", tc.name, got, replace, tc.wantID, tc.wantReplace)
		}
	}
}

// TestPlanUnknown checks the step for inputs not known yet: every computed
// attribute unknown, except dependencies_rendered without dependencies,
// and the id while the template is known.
func TestPlanUnknown(t *testing.T) {
	t.Parallel()
	listed := tftypes.NewValue(tftypes.DynamicPseudoType, tftypes.UnknownValue)
	unlisted := tftypes.NewValue(tftypes.DynamicPseudoType, nil)
	tests := []struct {
		name         string
		template     *unstructured.Unstructured
		dependencies tftypes.Value
		wantDepsNull bool
		wantIDSet    bool
	}{
		{"no dependencies, template known", stepDeployment("apps/v1", "web"), unlisted, true, false},
		{"dependencies listed, template unknown", nil, listed, false, true},
	}
	for _, tc := range tests {
		set := map[string]tftypes.Value{}
		planUnknown(manifestRequest{in: manifestInputs{template: tc.template}, planned: manifestRecord{dependencies: tc.dependencies}}, set)
		for _, name := range []string{attrPlacement, attrSuspendedClusters, attrStages, attrRendered, attrPolicy, attrAffinityTerm, attrStatus, attrConnections} {
			if set[name].IsKnown() {
				t.Errorf("%s: %s = %v, want unknown", tc.name, name, set[name])
			}
		}
		if deps := set[attrDependenciesRendered]; deps.IsNull() != tc.wantDepsNull || (!tc.wantDepsNull && deps.IsKnown()) {
			t.Errorf("%s: dependencies_rendered = %v, want null %v (else unknown)", tc.name, deps, tc.wantDepsNull)
		}
		if id, ok := set[attrID]; ok != tc.wantIDSet || (ok && id.IsKnown()) {
			t.Errorf("%s: id = %v (set %v), want set %v and unknown", tc.name, id, ok, tc.wantIDSet)
		}
	}
}

// TestPreviousOf checks what the plan resumes from: the recorded placement,
// term and claim; only the claim once reschedule_trigger changed.
func TestPreviousOf(t *testing.T) {
	t.Parallel()
	trigger := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	recorded := manifestRecord{
		placement: map[string]int64{"west": 1, "east": 2}, affinityTerm: "backup",
		policy: "PropagationPolicy default/web", rescheduleTrigger: trigger("a"),
	}
	claim := &policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "web"}
	tests := []struct {
		name string
		m    manifestRequest
		want engine.Previous
	}{
		{"sticky", manifestRequest{hasState: true, recorded: recorded, planned: manifestRecord{rescheduleTrigger: trigger("a")}},
			engine.Previous{Placement: []api.TargetCluster{{Name: "east", Replicas: 2}, {Name: "west", Replicas: 1}}, AffinityTerm: "backup", Claim: claim}},
		{"rescheduled: only the claim stays", manifestRequest{hasState: true, recorded: recorded, planned: manifestRecord{rescheduleTrigger: trigger("b")}},
			engine.Previous{Claim: claim}},
		{"no policy recorded", manifestRequest{hasState: true, recorded: manifestRecord{placement: map[string]int64{"east": 1}, policy: "not a policy"}},
			engine.Previous{Placement: []api.TargetCluster{{Name: "east", Replicas: 1}}}},
		{"a new resource", manifestRequest{planned: manifestRecord{rescheduleTrigger: trigger("a")}}, engine.Previous{}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, previousOf(tc.m)); diff != "" {
			t.Errorf("%s: previousOf (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestShowResult checks the step that shows the template's plan, and that
// a plan error names the manifest and sets nothing.
func TestShowResult(t *testing.T) {
	t.Parallel()
	web := stepDeployment("apps/v1", "web")
	webRef := api.TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	ref := plan.PolicyRef{Kind: api.KindPropagationPolicy, Namespace: "default", Name: "web"}
	placed := plan.Result{
		Template: webRef, Policy: &ref, AffinityTerm: "primary",
		Placement: []api.TargetCluster{{Name: "east", Replicas: 2}},
		Works:     map[string]render.Work{"east": {Cluster: "east", Object: web}},
		Suspended: []string{"east"},
		Stages:    []policy.Stage{{Name: "canary", Clusters: []string{"east"}}},
	}
	set := map[string]tftypes.Value{}
	where, diags := showResult(placed, nil, nil, set)
	if diags.HasError() {
		t.Fatalf("showResult: %v", diags)
	}
	want := map[string]tftypes.Value{
		attrPolicy:            tftypes.NewValue(tftypes.String, ref.String()),
		attrAffinityTerm:      tftypes.NewValue(tftypes.String, "primary"),
		attrPlacement:         placementValue(map[string]int64{"east": 2}),
		attrSuspendedClusters: suspendedValue([]string{"east"}),
		attrStages:            stagesValue([]policy.Stage{{Name: "canary", Clusters: []string{"east"}}}),
		attrRendered:          rawStringMap(map[string]string{"east": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`}),
	}
	for name, v := range want {
		if !set[name].Equal(v) {
			t.Errorf("%s = %v, want %v", name, set[name], v)
		}
	}
	if diff := cmp.Diff(map[string]bool{"east": true}, where); diff != "" {
		t.Errorf("where (-want +got):\n%s", diff)
	}

	unclaimed := plan.Result{Template: webRef}
	set = map[string]tftypes.Value{}
	if _, diags := showResult(unclaimed, nil, nil, set); diags.HasError() || diags.WarningsCount() != 1 || !set[attrPolicy].IsNull() || !set[attrAffinityTerm].IsNull() {
		t.Errorf("unclaimed: diags %v, policy %v, affinity_term %v; want one warning and both null", diags, set[attrPolicy], set[attrAffinityTerm])
	}

	set = map[string]tftypes.Value{}
	failed := plan.Result{Template: webRef, Err: errors.New("no cluster fits")}
	if _, diags := showResult(failed, nil, nil, set); !diags.HasError() || len(set) != 0 {
		t.Errorf("a plan error: diags %v, set %v; want an error and nothing set", diags, set)
	}
}

// TestPlanConnections checks that connections is known only when no
// recorded cluster is left to prune.
func TestPlanConnections(t *testing.T) {
	t.Parallel()
	east := engine.Member{Connection: &member.Connection{Host: "https://127.0.0.1:6443"}}
	east.Cluster.Name = "east"
	pending := engine.Member{}
	pending.Cluster.Name = "west"
	members := []engine.Member{east, pending}
	b, err := json.Marshal(east.Connection)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		recorded manifestRecord
		prior    manifestPrivate
		where    map[string]bool
		want     tftypes.Value
	}{
		{"only placed clusters", manifestRecord{}, manifestPrivate{Applied: []string{"east"}}, map[string]bool{"east": true},
			tftypes.NewValue(connectionsType, map[string]tftypes.Value{"east": tftypes.NewValue(tftypes.String, string(b))})},
		{"a connection not known yet", manifestRecord{}, manifestPrivate{}, map[string]bool{"west": true},
			tftypes.NewValue(connectionsType, map[string]tftypes.Value{"west": stringUnknown})},
		{"a recorded cluster left: known after apply", manifestRecord{rendered: rawStringMap(map[string]string{"west": "{}"})}, manifestPrivate{}, map[string]bool{"east": true},
			tftypes.NewValue(connectionsType, tftypes.UnknownValue)},
		{"a dependency left: known after apply", manifestRecord{}, manifestPrivate{Dependencies: map[string][]string{"v1, Kind=ConfigMap, default/c": {"west"}}}, map[string]bool{"east": true},
			tftypes.NewValue(connectionsType, tftypes.UnknownValue)},
	}
	for _, tc := range tests {
		set := map[string]tftypes.Value{}
		m := manifestRequest{in: manifestInputs{fleet: engine.Fleet{Members: members}}, recorded: tc.recorded}
		if diags := planConnections(m, tc.prior, tc.where, set); diags.HasError() {
			t.Fatalf("%s: %v", tc.name, diags)
		}
		if got := set[attrConnections]; !got.Equal(tc.want) {
			t.Errorf("%s: connections = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPlanStatus checks that the recorded status stays only while the
// plan changes nothing it depends on.
func TestPlanStatus(t *testing.T) {
	t.Parallel()
	status, err := rawFromJSON(map[string]any{"health": "Healthy", "clusters": map[string]any{}, "aggregated": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	rendered := rawStringMap(map[string]string{"east": "{}"})
	placement := placementValue(map[string]int64{"east": 1})
	recorded := manifestRecord{
		placementRaw: placement, rendered: rendered, suspendedRaw: suspendedValue(nil),
		dependenciesRendered: tftypes.NewValue(dependenciesRenderedType, nil), status: status,
	}
	planned := func(rendered tftypes.Value) map[string]tftypes.Value {
		return map[string]tftypes.Value{
			attrPlacement: placement, attrRendered: rendered, attrSuspendedClusters: suspendedValue(nil),
			attrDependenciesRendered: tftypes.NewValue(dependenciesRenderedType, nil),
		}
	}
	withoutStatus := recorded
	withoutStatus.status = tftypes.NewValue(tftypes.DynamicPseudoType, nil)
	tests := []struct {
		name     string
		hasState bool
		recorded manifestRecord
		set      map[string]tftypes.Value
		want     tftypes.Value
	}{
		{"unchanged: the status stays", true, recorded, planned(rendered), status},
		{"a changed object: known after apply", true, recorded, planned(rawStringMap(map[string]string{"east": `{"a":1}`})), dynamicUnknown},
		{"no recorded status", true, withoutStatus, planned(rendered), dynamicUnknown},
		{"a new resource", false, manifestRecord{}, planned(rendered), dynamicUnknown},
	}
	for _, tc := range tests {
		planStatus(manifestRequest{hasState: tc.hasState, recorded: tc.recorded}, tc.set)
		if !tc.set[attrStatus].Equal(tc.want) {
			t.Errorf("%s: status = %v, want %v", tc.name, tc.set[attrStatus], tc.want)
		}
	}
}

// TestNodeLimitWarnings checks that a cluster whose share its nodes limit
// is explained when the plan changes its replicas, and only then.
func TestNodeLimitWarnings(t *testing.T) {
	t.Parallel()
	res := plan.Result{
		Placement:   []api.TargetCluster{{Name: "frag", Replicas: 3}, {Name: "roomy", Replicas: 3}},
		NodeLimited: []scheduler.NodeLimit{{Cluster: "frag", PerNode: 3, ClusterWide: 6}},
	}
	tests := []struct {
		name     string
		recorded map[string]int64
		want     []string
	}{
		{"new placement", nil, []string{"Cluster frag's share is limited by its nodes: frag: 3 (per-node fit: room for 3; cluster-wide free would allow 6). " +
			"Replicas are estimated node by node, as kube-scheduler will place them, not from the cluster's summed free resources."}},
		{"changed replicas", map[string]int64{"frag": 2, "roomy": 4}, []string{"Cluster frag's share is limited by its nodes: frag: 3 (per-node fit: room for 3; cluster-wide free would allow 6). " +
			"Replicas are estimated node by node, as kube-scheduler will place them, not from the cluster's summed free resources."}},
		{"kept replicas", map[string]int64{"frag": 3, "roomy": 3}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, d := range nodeLimitWarnings(res, tt.recorded) {
			got = append(got, d.Summary()+": "+d.Detail())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: warnings (-want +got):\n%s", tt.name, diff)
		}
	}
}
