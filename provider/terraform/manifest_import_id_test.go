package terraform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

func TestParseManifestImportID(t *testing.T) {
	type namedKubeconfig struct{ Name, Path, Context string }
	for _, tc := range []struct {
		id       string
		template string
		members  []namedKubeconfig
		policy   string
		err      string
	}{
		{id: "apps/v1, Kind=Deployment, default/web", template: "apps/v1, Kind=Deployment, default/web"},
		{
			id:       "apps/v1, Kind=Deployment, default/web;cluster=east,~/.kube/config,kind-east;cluster=west,/k;policy=PropagationPolicy default/web",
			template: "apps/v1, Kind=Deployment, default/web",
			members:  []namedKubeconfig{{"east", "~/.kube/config", "kind-east"}, {"west", "/k", ""}},
			policy:   "PropagationPolicy default/web",
		},
		{id: "v1, Kind=ConfigMap, default/cm;cluster=east", err: "want cluster=NAME,KUBECONFIG_PATH[,CONTEXT]"},
		{id: "v1, Kind=ConfigMap, default/cm;cluster=east,/k,", err: "want cluster=NAME,KUBECONFIG_PATH[,CONTEXT]"},
		{id: "v1, Kind=ConfigMap, default/cm;cluster=east,/k;cluster=east,/j", err: "cluster east is named twice"},
		{id: "v1, Kind=ConfigMap, default/cm;policy=a;policy=b", err: "want one policy=POLICY"},
		{id: "v1, Kind=ConfigMap, default/cm;region=eu", err: "want cluster=NAME"},
		{id: "web", err: "want the id flotilla_manifest shows"},
	} {
		got, err := parseManifestImportID(tc.id)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.id, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.id, err)
			continue
		}
		var members []namedKubeconfig
		for _, m := range got.members {
			members = append(members, namedKubeconfig{m.Cluster.Name, m.Connection.KubeconfigPath, m.Connection.Context})
		}
		if s := api.TemplateRefOf(got.template).String(); s != tc.template || got.policy != tc.policy || !cmp.Equal(members, tc.members) {
			t.Errorf("%q: got template %q, members %v, policy %q; want %q, %v, %q", tc.id, s, members, got.policy, tc.template, tc.members, tc.policy)
		}
	}
}

// TestTrimmedStatus checks that trimming keeps what the scheduler's API
// filter reads: the templates' group versions, or one entry when none is
// served, so that "not collected" (empty) and "collected" stay apart.
func TestTrimmedStatus(t *testing.T) {
	apps := api.APIEnablement{GroupVersion: "apps/v1", Resources: []api.APIResource{{Name: "deployments", Kind: "Deployment"}}}
	core := api.APIEnablement{GroupVersion: "v1", Resources: []api.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}}
	batch := api.APIEnablement{GroupVersion: "batch/v1", Resources: []api.APIResource{{Name: "jobs", Kind: "Job"}}}
	deployment, _ := templateFromImportID("apps/v1, Kind=Deployment, default/web")
	widget, _ := templateFromImportID("example.com/v1, Kind=Widget, default/w")
	for _, tc := range []struct {
		name string
		in   []api.APIEnablement
		want []api.APIEnablement
		tmpl string
	}{
		{name: "keeps the template's group version", in: []api.APIEnablement{core, apps, batch}, want: []api.APIEnablement{apps}},
		{name: "not collected stays empty", in: nil, want: nil},
		{name: "a group version not served keeps one entry", in: []api.APIEnablement{core, batch}, want: []api.APIEnablement{{GroupVersion: "v1"}}, tmpl: "widget"},
	} {
		tmpl := deployment
		if tc.tmpl == "widget" {
			tmpl = widget
		}
		got := trimmedStatus(api.ClusterStatus{APIEnablements: tc.in, KubernetesVersion: "v1"}, []*unstructured.Unstructured{tmpl})
		if diff := cmp.Diff(tc.want, got.APIEnablements); diff != "" || got.KubernetesVersion != "v1" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
