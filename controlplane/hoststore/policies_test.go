package hoststore

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// TestInvalidPolicyHolds: an invalid override policy holds the templates
// it may apply to, so none is rendered without overrides it had.
func TestInvalidPolicyHolds(t *testing.T) {
	web := &unstructured.Unstructured{}
	web.SetAPIVersion("apps/v1")
	web.SetKind("Deployment")
	web.SetNamespace("default")
	web.SetName("web")
	web.SetLabels(map[string]string{"app": "web"})
	byName := func(n string) []api.ResourceSelector {
		return []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: n}}
	}
	overriderErr := field.ErrorList{field.Invalid(field.NewPath("spec", "overrideRules").Index(0).Child("overriders", "plaintext").Index(0).Child("path"), "x", "")}
	selectorErr := field.ErrorList{field.Invalid(field.NewPath("spec", "resourceSelectors").Index(0).Child("labelSelector", "matchExpressions").Index(0).Child("operator"), "Bogus", "")}
	cases := []struct {
		name string
		p    InvalidPolicy
		want bool
	}{
		{"selects it by name", InvalidPolicy{Selectors: byName("web"), Errs: overriderErr}, true},
		{"selects another template", InvalidPolicy{Selectors: byName("api"), Errs: overriderErr}, false},
		{"no selectors select everything", InvalidPolicy{Errs: overriderErr}, true},
		{"invalid selectors cannot tell, so they hold", InvalidPolicy{
			Selectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus", Values: []string{"api"}}},
			}}},
			Errs: selectorErr,
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Holds(web); got != tc.want {
				t.Errorf("Holds = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestClaimed: a binding's recorded claim names an invalid policy only of
// the same kind, name and (for a PropagationPolicy) namespace.
func TestClaimed(t *testing.T) {
	invalid := []InvalidPolicy{
		{Kind: api.KindPropagationPolicy, Namespace: "a", Name: "p"},
		{Kind: api.KindClusterPropagationPolicy, Name: "c"},
	}
	cases := []struct {
		name      string
		namespace string
		prev      *policy.ClaimRef
		want      string
	}{
		{"no previous claim", "a", nil, ""},
		{"its policy is invalid", "a", &policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "p"}, "PropagationPolicy a/p"},
		{"a namesake in another namespace", "b", &policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "p"}, ""},
		{"a cluster-wide policy", "b", &policy.ClaimRef{Kind: api.KindClusterPropagationPolicy, Name: "c"}, "ClusterPropagationPolicy c"},
		{"another kind of the same name", "a", &policy.ClaimRef{Kind: api.KindClusterPropagationPolicy, Name: "p"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if p := Claimed(invalid, tc.namespace, tc.prev); p != nil {
				got = p.Ref()
			}
			if got != tc.want {
				t.Errorf("Claimed = %q, want %q", got, tc.want)
			}
		})
	}
}
