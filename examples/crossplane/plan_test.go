package examples

import (
	"bytes"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// karmadaKinds maps the composed managed resources to the Karmada kinds the
// provider writes into the host: the MR's spec.forProvider is the object's
// spec, as the provider's reconcilers do it.
var karmadaKinds = map[string]string{
	"PropagationPolicy": "PropagationPolicy",
	"OverridePolicy":    "OverridePolicy",
}

// planApp plans what an app's rendered managed resources ask for with
// flotilla's engine, over the member clusters in the app's clusters.yaml
// (Ready, with room for the app) plus extra taints per cluster. The
// policies and the template are decoded strictly and validated as
// Karmada's webhooks would, so a rendered spec the control plane would
// reject fails here.
func planApp(t *testing.T, app string, r rendered, taints map[string][]map[string]any) plan.Result {
	t.Helper()
	var docs []map[string]any
	for _, c := range readDocs(t, filepath.Join(app, "clusters.yaml")) {
		fp, _, _ := unstructured.NestedMap(c.Object, "spec", "forProvider")
		labels, _, _ := unstructured.NestedStringMap(fp, "labels")
		spec := map[string]any{"syncMode": "Push"}
		if region, ok := fp["region"]; ok {
			spec["region"] = region
		}
		all, _, _ := unstructured.NestedSlice(fp, "taints")
		for _, extra := range taints[c.GetName()] {
			all = append(all, extra)
		}
		if len(all) > 0 {
			spec["taints"] = all
		}
		docs = append(docs, map[string]any{
			"apiVersion": "cluster.karmada.io/v1alpha1",
			"kind":       "Cluster",
			"metadata":   map[string]any{"name": c.GetName(), "labels": toAny(labels)},
			"spec":       spec,
			"status": map[string]any{
				"conditions": []any{map[string]any{
					"type":               "Ready",
					"status":             "True",
					"reason":             "ClusterReady",
					"message":            "cluster is healthy and ready to accept workloads",
					"lastTransitionTime": "2026-01-01T00:00:00Z",
				}},
				"resourceSummary": map[string]any{
					"allocatable": map[string]any{"cpu": "32", "memory": "256Gi", "pods": "110"},
				},
			},
		})
	}
	namespace := r.XR.GetNamespace()
	var templates int
	for _, name := range sortedKeys(r.Composed) {
		mr := r.Composed[name]
		fp, _, _ := unstructured.NestedMap(mr.Object, "spec", "forProvider")
		if kind, ok := karmadaKinds[mr.GetKind()]; ok {
			docs = append(docs, map[string]any{
				"apiVersion": "policy.karmada.io/v1alpha1",
				"kind":       kind,
				"metadata":   map[string]any{"name": name, "namespace": namespace},
				"spec":       fp,
			})
			continue
		}
		if mr.GetKind() != "Manifest" {
			t.Fatalf("resource %s: %s is not planned by this test", name, mr.GetKind())
		}
		tmpl := &unstructured.Unstructured{Object: fp["manifest"].(map[string]any)}
		if tmpl.GetNamespace() == "" {
			tmpl.SetNamespace(namespace) // as the provider does: a Manifest's template lives in its namespace
		}
		docs = append(docs, tmpl.Object)
		templates++
	}
	if templates != 1 {
		t.Fatalf("%s renders %d Manifests, want 1", app, templates)
	}
	var buf bytes.Buffer
	for _, d := range docs {
		data, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	b, err := api.Decode("rendered "+app, buf.Bytes())
	if err != nil {
		t.Fatalf("the control plane would reject the rendered objects: %v\n%s", err, buf.String())
	}
	results := plan.Plan(plan.FleetFromBundle("examples", b), b.Templates)
	if len(results) != 1 {
		t.Fatalf("plan returned %d results, want 1", len(results))
	}
	res := results[0]
	if res.Err != nil {
		t.Fatalf("plan %s: %v (reasons %v)", res.Template, res.Err, res.Reasons)
	}
	if res.Policy == nil {
		t.Fatalf("no propagation policy claims %s", res.Template)
	}
	return res
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// placement is a plan's cluster → replicas.
func placement(res plan.Result) map[string]int64 {
	out := map[string]int64{}
	for _, tc := range res.Placement {
		out[tc.Name] = int64(tc.Replicas)
	}
	return out
}

// workImage and workReplicas read the object one cluster receives.
func workImage(t *testing.T, res plan.Result, cluster string) string {
	t.Helper()
	w, ok := res.Works[cluster]
	if !ok {
		t.Fatalf("%s goes nowhere near %s (works for %v)", res.Template, cluster, placement(res))
	}
	containers, _, _ := unstructured.NestedSlice(w.Object.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%s in %s has %d containers, want 1", res.Template, cluster, len(containers))
	}
	image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
	return image
}

func workReplicas(t *testing.T, res plan.Result, cluster string) int64 {
	t.Helper()
	w, ok := res.Works[cluster]
	if !ok {
		t.Fatalf("%s goes nowhere near %s (works for %v)", res.Template, cluster, placement(res))
	}
	n, ok := asInt(nested(t, w.Object, "spec", "replicas"))
	if !ok {
		t.Fatalf("%s in %s: spec.replicas is not a number", res.Template, cluster)
	}
	return n
}

func workLabel(t *testing.T, res plan.Result, cluster, key string) string {
	t.Helper()
	w, ok := res.Works[cluster]
	if !ok {
		t.Fatalf("%s goes nowhere near %s (works for %v)", res.Template, cluster, placement(res))
	}
	return w.Object.GetLabels()[key]
}
