package interpret

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func requests(cpu, memory string) map[string]any {
	return map[string]any{"requests": map[string]any{"cpu": cpu, "memory": memory}}
}

func TestReplicas(t *testing.T) {
	podSpec := []string{"spec", "template", "spec"}
	cases := map[string]struct {
		tmpl         *unstructured.Unstructured
		wantReplicas int32
		wantRequest  map[corev1.ResourceName]string
		wantErr      string
	}{
		"deployment replicas": {
			tmpl:         apitest.MakeDeployment("web", "default").Replicas(4).Obj(),
			wantReplicas: 4,
		},
		"deployment without replicas defaults to one": {
			tmpl:         apitest.MakeDeployment("web", "default").Remove("spec", "replicas").Obj(),
			wantReplicas: 1,
		},
		"statefulset": {
			tmpl:         apitest.MakeStatefulSet("db", "default").Replicas(3).Obj(),
			wantReplicas: 3,
		},
		"job uses parallelism": {
			tmpl:         apitest.MakeJob("batch", "default").Parallelism(5).Completions(10).Obj(),
			wantReplicas: 5,
		},
		"bare pod is one replica": {
			tmpl:         apitest.MakePod("p", "default").Obj(),
			wantReplicas: 1,
		},
		"configmap is not a workload": {
			tmpl:         apitest.MakeConfigMap("c", "default").Data("a", "b").Obj(),
			wantReplicas: 0,
		},
		"requests are summed over containers, raised to a larger init container": {
			tmpl: apitest.MakeDeployment("web", "default").Replicas(2).
				Set([]any{
					map[string]any{"name": "a", "image": "a", "resources": requests("500m", "1Gi")},
					map[string]any{"name": "b", "image": "b", "resources": requests("250m", "1Gi")},
				}, append(podSpec, "containers")...).
				Set([]any{map[string]any{"name": "init", "image": "i", "resources": requests("1", "512Mi")}}, append(podSpec, "initContainers")...).
				Obj(),
			wantReplicas: 2,
			wantRequest:  map[corev1.ResourceName]string{corev1.ResourceCPU: "1", corev1.ResourceMemory: "2Gi"},
		},
		"negative replicas are refused": {
			tmpl:    apitest.MakeDeployment("web", "default").Set(int64(-1), "spec", "replicas").Obj(),
			wantErr: "spec.replicas: want a non-negative integer",
		},
		"replicas of the wrong type are refused": {
			tmpl:    apitest.MakeDeployment("web", "default").Set("three", "spec", "replicas").Obj(),
			wantErr: "spec.replicas",
		},
		"malformed pod template is refused with its path": {
			tmpl:    apitest.MakeDeployment("web", "default").Set("nope", append(podSpec, "containers")...).Obj(),
			wantErr: "spec.template.spec",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			replicas, req, err := GetReplicas(tc.tmpl)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if replicas != tc.wantReplicas {
				t.Errorf("replicas: want %d, got %d", tc.wantReplicas, replicas)
			}
			got := map[corev1.ResourceName]string{}
			if req != nil {
				for name, q := range req.ResourceRequest {
					got[name] = q.String()
				}
			}
			want := map[corev1.ResourceName]string{}
			for name, s := range tc.wantRequest {
				q := resource.MustParse(s)
				want[name] = q.String()
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resource request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDependencies(t *testing.T) {
	podSpec := []string{"spec", "template", "spec"}
	tmpl := apitest.MakeDeployment("web", "prod").
		Set([]any{
			map[string]any{"name": "cfg", "configMap": map[string]any{"name": "web-config"}},
			map[string]any{"name": "tls", "secret": map[string]any{"secretName": "web-tls"}},
			map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "web-data"}},
			map[string]any{"name": "proj", "projected": map[string]any{"sources": []any{
				map[string]any{"configMap": map[string]any{"name": "web-config"}},
				map[string]any{"secret": map[string]any{"name": "web-proj"}},
			}}},
		}, append(podSpec, "volumes")...).
		Set([]any{map[string]any{
			"name": "web", "image": "web",
			"envFrom": []any{map[string]any{"secretRef": map[string]any{"name": "web-env"}}},
			"env":     []any{map[string]any{"name": "A", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "web-flags", "key": "a"}}}},
		}}, append(podSpec, "containers")...).
		Set([]any{map[string]any{"name": "pull"}}, append(podSpec, "imagePullSecrets")...).
		Set("web-sa", append(podSpec, "serviceAccountName")...).
		Obj()
	got, err := GetDependencies(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	want := []Dependency{
		{Kind: "ConfigMap", Namespace: "prod", Name: "web-config"},
		{Kind: "ConfigMap", Namespace: "prod", Name: "web-flags"},
		{Kind: "PersistentVolumeClaim", Namespace: "prod", Name: "web-data"},
		{Kind: "Secret", Namespace: "prod", Name: "pull"},
		{Kind: "Secret", Namespace: "prod", Name: "web-env"},
		{Kind: "Secret", Namespace: "prod", Name: "web-proj"},
		{Kind: "Secret", Namespace: "prod", Name: "web-tls"},
		{Kind: "ServiceAccount", Namespace: "prod", Name: "web-sa"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}

	deps, err := GetDependencies(apitest.MakeDeployment("web", "prod").Set("default", append(podSpec, "serviceAccountName")...).Obj())
	if err != nil || len(deps) != 0 {
		t.Errorf("the default service account is not a dependency; got %v, %v", deps, err)
	}
	deps, err = GetDependencies(apitest.MakeConfigMap("c", "prod").Obj())
	if err != nil || deps != nil {
		t.Errorf("a ConfigMap has no dependencies; got %v, %v", deps, err)
	}
}

// TestIngressDependencies follows Karmada's getIngressDependencies: an
// Ingress depends on the Secrets its spec.tls names, once each.
func TestIngressDependencies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls     any
		want    []Dependency
		wantErr string
	}{
		{name: "no tls", tls: nil, want: []Dependency{}},
		{name: "two secrets, one twice, one entry without a secret", tls: []any{
			map[string]any{"hosts": []any{"a.example.com"}, "secretName": "b-tls"},
			map[string]any{"hosts": []any{"c.example.com"}, "secretName": "a-tls"},
			map[string]any{"hosts": []any{"d.example.com"}, "secretName": "b-tls"},
			map[string]any{"hosts": []any{"e.example.com"}},
		}, want: []Dependency{
			{Kind: "Secret", Namespace: "default", Name: "a-tls"},
			{Kind: "Secret", Namespace: "default", Name: "b-tls"},
		}},
		{name: "an entry that is not an object", tls: []any{"web-tls"}, wantErr: "spec.tls[0]: not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := apitest.MakeObjOf("networking.k8s.io/v1", "Ingress")
			if tc.tls != nil {
				w = w.Spec("tls", tc.tls)
			}
			got, err := GetDependencies(w.Obj())
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
		})
	}
}
