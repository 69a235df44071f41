package interpret_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// exampleInterpreter decodes the customizations shipped in
// examples/interpreter and returns the Interpreter that runs them.
func exampleInterpreter(t *testing.T, files ...string) *interpret.Interpreter {
	t.Helper()
	var rics []api.ResourceInterpreterCustomization
	for _, f := range files {
		rics = append(rics, apitest.ReadInterpreters(t, filepath.Join("..", "..", "examples", "interpreter", f))...)
	}
	in, err := interpret.New(rics)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// obj parses a YAML object as the apiserver and api.Decode do (whole
// numbers are int64).
func obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	o := &unstructured.Unstructured{}
	if err := o.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return o
}

const rollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop, generation: 4}
spec:
  replicas: 3
  template:
    spec:
      serviceAccountName: web
      containers:
      - name: web
        image: web:1
        envFrom: [{configMapRef: {name: web-config}}]
        resources: {requests: {cpu: 250m, memory: 64Mi}}
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {}}]}}
`

// TestArgoRolloutCustomization runs every operation of
// examples/interpreter/argo-rollout.yaml on sample Rollouts.
func TestArgoRolloutCustomization(t *testing.T) {
	in := exampleInterpreter(t, "argo-rollout.yaml")
	tmpl := obj(t, rollout)

	n, req, err := in.GetReplicas(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || req == nil || !req.ResourceRequest.Cpu().Equal(resource.MustParse("250m")) || req.Namespace != "shop" {
		t.Fatalf("GetReplicas = %d, %+v; want 3 and 250m cpu in shop", n, req)
	}
	if !in.HasReplicas(tmpl) {
		t.Error("HasReplicas = false for a customized Rollout")
	}

	revised := tmpl.DeepCopy()
	if err := in.ReviseReplica(revised, 2); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedInt64(revised.Object, "spec", "replicas"); got != 2 {
		t.Errorf("revised replicas = %d, want 2", got)
	}
	// The canary step {pause: {}} is an empty object in the template; it
	// must come back as one, not as an empty list or not at all.
	if diff := cmp.Diff(tmpl.Object["spec"].(map[string]any)["strategy"], revised.Object["spec"].(map[string]any)["strategy"]); diff != "" {
		t.Errorf("ReviseReplica changed the strategy (-want +got):\n%s", diff)
	}

	deps, err := in.GetDependencies(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	wantDeps := []interpret.Dependency{{Kind: "ConfigMap", Namespace: "shop", Name: "web-config"}, {Kind: "ServiceAccount", Namespace: "shop", Name: "web"}}
	if diff := cmp.Diff(wantDeps, deps); diff != "" {
		t.Errorf("GetDependencies (-want +got):\n%s", diff)
	}

	live := func(status string) *unstructured.Unstructured {
		return obj(t, rollout+"status: "+status)
	}
	healthCases := []struct {
		status string
		want   interpret.Health
	}{
		{`{observedGeneration: "4", phase: Healthy, updatedReplicas: 3, availableReplicas: 3}`, interpret.Healthy},
		{`{observedGeneration: "3", phase: Healthy, updatedReplicas: 3, availableReplicas: 3}`, interpret.Unhealthy},
		{`{observedGeneration: "4", phase: Progressing, updatedReplicas: 1, availableReplicas: 3}`, interpret.Unhealthy},
		{`{observedGeneration: "4", phase: Degraded, updatedReplicas: 3, availableReplicas: 3}`, interpret.Unhealthy},
	}
	for _, c := range healthCases {
		if got, msg := in.InterpretHealth(live(c.status)); got != c.want {
			t.Errorf("InterpretHealth(%s) = %s (%s), want %s", c.status, got, msg, c.want)
		}
	}

	reflected, err := in.ReflectStatus(live(`{observedGeneration: "4", phase: Progressing, message: canary paused, replicas: 2, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2, currentPodHash: abc}`))
	if err != nil {
		t.Fatal(err)
	}
	wantReflected := map[string]any{"phase": "Progressing", "message": "canary paused", "replicas": int64(2), "updatedReplicas": int64(1), "readyReplicas": int64(2), "availableReplicas": int64(2)}
	if diff := cmp.Diff(wantReflected, reflected); diff != "" {
		t.Errorf("ReflectStatus (-want +got):\n%s", diff)
	}

	agg, err := in.AggregateStatus(tmpl, []interpret.Member{
		{Cluster: "member2", Applied: true, Status: map[string]any{"replicas": int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "phase": "Healthy"}},
		{Cluster: "member1", Applied: true, Status: reflected},
		{Cluster: "member3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantAgg := map[string]any{"replicas": int64(3), "updatedReplicas": int64(2), "readyReplicas": int64(3), "availableReplicas": int64(3), "phase": "Progressing", "message": "member1: canary paused"}
	if diff := cmp.Diff(wantAgg, agg); diff != "" {
		t.Errorf("AggregateStatus (-want +got):\n%s", diff)
	}

	labelled := tmpl.DeepCopy()
	labelled.SetLabels(map[string]string{interpret.RetainReplicasLabel: "true"})
	scaled := obj(t, rollout)
	_ = unstructured.SetNestedField(scaled.Object, int64(7), "spec", "replicas")
	for _, c := range []struct {
		desired *unstructured.Unstructured
		want    [][]string
	}{{labelled, [][]string{{"spec", "replicas"}}}, {tmpl.DeepCopy(), nil}} {
		paths, err := in.Retain(c.desired, scaled)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, paths); diff != "" {
			t.Errorf("Retain paths (-want +got):\n%s", diff)
		}
		_, found, _ := unstructured.NestedFieldNoCopy(c.desired.Object, "spec", "replicas")
		if found == (c.want != nil) {
			t.Errorf("spec.replicas left in desired = %v, want %v", found, c.want == nil)
		}
	}
}

const cloneSet = `
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: api, namespace: shop, generation: 2}
spec:
  replicas: 6
  updateStrategy: {partition: 3}
  template:
    spec:
      containers:
      - name: api
        image: api:2
        env: [{name: TOKEN, valueFrom: {secretKeyRef: {name: api-token, key: token}}}]
        resources: {requests: {cpu: "1"}}
`

// TestOpenKruiseCloneSetCustomization runs
// examples/interpreter/openkruise-cloneset.yaml on sample CloneSets.
func TestOpenKruiseCloneSetCustomization(t *testing.T) {
	in := exampleInterpreter(t, "openkruise-cloneset.yaml")
	tmpl := obj(t, cloneSet)
	n, req, err := in.GetReplicas(tmpl)
	if err != nil || n != 6 || !req.ResourceRequest.Cpu().Equal(resource.MustParse("1")) {
		t.Fatalf("GetReplicas = %d, %+v, %v; want 6 and 1 cpu", n, req, err)
	}
	for _, c := range []struct{ share, partition int64 }{{4, 2}, {2, 1}, {0, 0}} {
		o := tmpl.DeepCopy()
		if err := in.ReviseReplica(o, c.share); err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedInt64(o.Object, "spec", "updateStrategy", "partition")
		if r, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); r != c.share || got != c.partition {
			t.Errorf("share %d: replicas %d partition %d, want %d and %d", c.share, r, got, c.share, c.partition)
		}
	}
	deps, err := in.GetDependencies(tmpl)
	if err != nil || len(deps) != 1 || deps[0] != (interpret.Dependency{Kind: "Secret", Namespace: "shop", Name: "api-token"}) {
		t.Errorf("GetDependencies = %v, %v; want Secret shop/api-token", deps, err)
	}
	live := obj(t, cloneSet+"status: {observedGeneration: 2, replicas: 6, updatedReplicas: 3, expectedUpdatedReplicas: 3, availableReplicas: 6, updateRevision: r2}")
	if h, msg := in.InterpretHealth(live); h != interpret.Healthy {
		t.Errorf("InterpretHealth = %s (%s), want Healthy (the partition holds 3 old pods on purpose)", h, msg)
	}
	_ = unstructured.SetNestedField(live.Object, int64(1), "status", "observedGeneration")
	if h, _ := in.InterpretHealth(live); h != interpret.Unhealthy {
		t.Errorf("InterpretHealth with an old observedGeneration = %s, want Unhealthy", h)
	}
	st := func(rev string, n int64) map[string]any {
		return map[string]any{"replicas": n, "readyReplicas": n, "availableReplicas": n, "updatedReplicas": n, "updatedReadyReplicas": n, "expectedUpdatedReplicas": n, "updateRevision": rev}
	}
	for _, c := range []struct {
		revs []string
		want any
	}{{[]string{"r2", "r2"}, "r2"}, {[]string{"r1", "r2"}, nil}} {
		agg, err := in.AggregateStatus(tmpl, []interpret.Member{{Cluster: "a", Applied: true, Status: st(c.revs[0], 4)}, {Cluster: "b", Applied: true, Status: st(c.revs[1], 2)}})
		if err != nil {
			t.Fatal(err)
		}
		if agg["replicas"] != int64(6) || agg["updatedReadyReplicas"] != int64(6) || agg["updateRevision"] != c.want {
			t.Errorf("AggregateStatus over %v = %v, want 6 replicas and revision %v", c.revs, agg, c.want)
		}
	}
	// A kind without a customization keeps the built-in rules.
	if n, _, err := in.GetReplicas(makeObj("Deployment").Spec("replicas", 5).Obj()); err != nil || n != 5 {
		t.Errorf("built-in Deployment GetReplicas = %d, %v; want 5", n, err)
	}
}
