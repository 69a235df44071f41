package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// TestBindings checks the previous ResourceBindings built from what a front
// end recorded: one per template with a placement or a claim, in template
// order, naming its template.
func TestBindings(t *testing.T) {
	t.Parallel()
	tmpl := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("default")
		u.SetName(name)
		return u
	}
	ref := func(name string) api.ObjectReference {
		return api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name}
	}
	east := []api.TargetCluster{{Name: "east", Replicas: 2}}
	claimed := api.ResourceBinding{Spec: api.ResourceBindingSpec{Resource: ref("web")}}
	policy.SetBindingClaim(&claimed, policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "web"}, "default")
	tests := []struct {
		name      string
		templates []*unstructured.Unstructured
		previous  []Previous
		want      []api.ResourceBinding
	}{{
		name:      "a placement and its affinity term",
		templates: []*unstructured.Unstructured{tmpl("web")},
		previous:  []Previous{{Placement: east, AffinityTerm: "backup"}},
		want: []api.ResourceBinding{{
			Spec:   api.ResourceBindingSpec{Resource: ref("web"), Clusters: east},
			Status: api.ResourceBindingStatus{SchedulerObservedAffinityName: "backup"},
		}},
	}, {
		name:      "a claim alone (rescheduled from scratch) keeps the claim",
		templates: []*unstructured.Unstructured{tmpl("web")},
		previous:  []Previous{{Claim: &policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "web"}}},
		want:      []api.ResourceBinding{claimed},
	}, {
		name:      "nothing recorded: no binding, and templates past previous have none",
		templates: []*unstructured.Unstructured{tmpl("web"), tmpl("db"), tmpl("cache")},
		previous:  []Previous{{AffinityTerm: "only a term"}, {Placement: east}},
		want:      []api.ResourceBinding{{Spec: api.ResourceBindingSpec{Resource: ref("db"), Clusters: east}}},
	}, {
		name:      "more previous than templates",
		templates: nil,
		previous:  []Previous{{Placement: east}},
		want:      nil,
	}}
	for _, tc := range tests {
		got := bindings(tc.templates, tc.previous)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: bindings (-want +got):\n%s", tc.name, diff)
		}
	}
}
