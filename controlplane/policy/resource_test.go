package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func TestSelectorSpecificity(t *testing.T) {
	tmpl := apitest.MakeDeployment("web", "prod").Label("app", "web").Obj()
	labels := func(kv ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{kv[0]: kv[1]}}
	}
	cases := map[string]struct {
		selector api.ResourceSelector
		want     policy.Specificity
	}{
		"kind":                    {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}, policy.MatchKind},
		"kind in namespace":       {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod"}, policy.MatchKind},
		"other namespace":         {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "dev"}, policy.NoMatch},
		"other apiVersion":        {api.ResourceSelector{APIVersion: "apps/v1beta1", Kind: "Deployment"}, policy.NoMatch},
		"other kind":              {api.ResourceSelector{APIVersion: "apps/v1", Kind: "StatefulSet"}, policy.NoMatch},
		"labels":                  {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: labels("app", "web")}, policy.MatchLabelSelector},
		"labels not matching":     {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: labels("app", "db")}, policy.NoMatch},
		"empty label selector":    {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{}}, policy.MatchLabelSelector},
		"name":                    {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, policy.MatchName},
		"other name":              {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}, policy.NoMatch},
		"name ignores labels":     {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", LabelSelector: labels("app", "db")}, policy.MatchName},
		"name in wrong namespace": {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "dev"}, policy.NoMatch},
		"invalid label selector": {api.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}}, policy.NoMatch},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, policy.SelectorSpecificity(tc.selector, tmpl)); diff != "" {
				t.Errorf("specificity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want != policy.NoMatch, policy.ResourceMatches(tc.selector, tmpl)); diff != "" {
				t.Errorf("ResourceMatches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectorsSpecificityTakesTheBest(t *testing.T) {
	tmpl := apitest.MakeConfigMap("cfg", "prod").Obj()
	selectors := []api.ResourceSelector{
		{APIVersion: "v1", Kind: "ConfigMap"},
		{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg"},
		{APIVersion: "v1", Kind: "Secret", Name: "cfg"},
	}
	if diff := cmp.Diff(policy.MatchName, policy.SelectorsSpecificity(selectors, tmpl)); diff != "" {
		t.Errorf("specificity (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(policy.NoMatch, policy.SelectorsSpecificity(nil, tmpl)); diff != "" {
		t.Errorf("no selectors (-want +got):\n%s", diff)
	}
	if policy.ResourceMatches(selectors[0], nil) {
		t.Error("a nil template matched")
	}
}
