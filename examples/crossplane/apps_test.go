package examples

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clusterLabel is the label both Compositions' override rules put on each
// cluster's copy of the Deployment.
const clusterLabel = "apps.example.flotilla.io/cluster"

// xrCluster is one entry of an XActiveActiveApp's spec.clusters.
type xrCluster struct {
	Name     string `json:"name"`
	Weight   int64  `json:"weight"`
	Registry string `json:"registry"`
}

// specOf converts an XR's spec into a struct.
func specOf(t *testing.T, xr *unstructured.Unstructured, into any) {
	t.Helper()
	data, err := json.Marshal(xr.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s %s: spec: %v", xr.GetKind(), xr.GetName(), err)
	}
}

// checkManifest checks the rendered Deployment against the XR's inputs.
func checkManifest(t *testing.T, r rendered, image string, replicas int64) {
	t.Helper()
	m := r.composed(t, "deployment", "Manifest")
	tmpl := &unstructured.Unstructured{Object: nested(t, m, "spec", "forProvider", "manifest").(map[string]any)}
	if tmpl.GetAPIVersion() != "apps/v1" || tmpl.GetKind() != "Deployment" || tmpl.GetName() != r.XR.GetName() {
		t.Errorf("Manifest holds %s %s %s, want apps/v1 Deployment %s", tmpl.GetAPIVersion(), tmpl.GetKind(), tmpl.GetName(), r.XR.GetName())
	}
	if got, _ := asInt(nested(t, tmpl, "spec", "replicas")); got != replicas {
		t.Errorf("Deployment replicas %d, want the XR's %d", got, replicas)
	}
	containers := nested(t, tmpl, "spec", "template", "spec", "containers").([]any)
	if got := containers[0].(map[string]any)["image"]; got != image {
		t.Errorf("Deployment image %v, want the XR's %s", got, image)
	}
	selector := nested(t, tmpl, "spec", "selector", "matchLabels")
	labels := nested(t, tmpl, "spec", "template", "metadata", "labels")
	if !reflect.DeepEqual(selector, labels) {
		t.Errorf("Deployment selector %v does not match its pod labels %v", selector, labels)
	}
}

func TestRenderActiveActive(t *testing.T) {
	const app = "active-active"
	tools := crossplaneTools(t)
	addr := startFunction(t, tools)
	r := render(t, tools, addr, app)
	var in struct {
		Image    string      `json:"image"`
		Replicas int64       `json:"replicas"`
		Clusters []xrCluster `json:"clusters"`
	}
	specOf(t, readOne(t, app+"/xr.yaml"), &in)

	checkManifest(t, r, in.Image, in.Replicas)

	pp := r.composed(t, "propagation-policy", "PropagationPolicy")
	weights := nested(t, pp, "spec", "forProvider", "placement", "replicaScheduling", "weightPreference", "staticWeightList").([]any)
	if len(weights) != len(in.Clusters) {
		t.Fatalf("staticWeightList has %d entries, the XR %d clusters: %v", len(weights), len(in.Clusters), weights)
	}
	var names []any
	for i, c := range in.Clusters {
		w := &unstructured.Unstructured{Object: weights[i].(map[string]any)}
		if got := nested(t, w, "targetCluster", "clusterNames"); !reflect.DeepEqual(got, []any{c.Name}) {
			t.Errorf("staticWeightList[%d] targets %v, want [%s]", i, got, c.Name)
		}
		if got, _ := asInt(nested(t, w, "weight")); got != c.Weight {
			t.Errorf("staticWeightList[%d] (%s) weight %d, want the XR's %d", i, c.Name, got, c.Weight)
		}
		names = append(names, c.Name)
	}
	if got := nested(t, pp, "spec", "forProvider", "placement", "clusterAffinity", "clusterNames"); !reflect.DeepEqual(got, names) {
		t.Errorf("clusterAffinity.clusterNames %v, want %v", got, names)
	}

	// The engine divides 3 replicas 1:2 and rewrites west's registry only.
	res := planApp(t, app, r, nil)
	if got, want := placement(res), map[string]int64{"east": 1, "west": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("placement %v, want %v", got, want)
	}
	for _, c := range in.Clusters {
		want := in.Image
		if c.Registry != "" {
			want = c.Registry + "/" + in.Image
		}
		if got := workImage(t, res, c.Name); got != want {
			t.Errorf("%s runs %s, want %s", c.Name, got, want)
		}
		if got := workLabel(t, res, c.Name, clusterLabel); got != c.Name {
			t.Errorf("%s's copy has label %s=%q, want %q", c.Name, clusterLabel, got, c.Name)
		}
	}

	// The Manifest's observed status reaches the XR.
	obs := map[string]any{
		"placement": map[string]any{"east": int64(1), "west": int64(2)},
		"health":    "Healthy",
		"policy":    "PropagationPolicy/web",
	}
	r = render(t, tools, addr, app, observe(t, r.composed(t, "deployment", "Manifest"), obs))
	for field, want := range obs {
		if got := nested(t, r.XR, "status", field); !sameJSON(got, want) {
			t.Errorf("XR status.%s %v (%T), want %v", field, got, got, want)
		}
	}
}

func TestRenderRemoteDR(t *testing.T) {
	const app = "remote-dr"
	tools := crossplaneTools(t)
	addr := startFunction(t, tools)
	r := render(t, tools, addr, app)
	var in struct {
		Image          string `json:"image"`
		Replicas       int64  `json:"replicas"`
		PrimaryCluster string `json:"primaryCluster"`
		DRCluster      string `json:"drCluster"`
		DR             struct {
			Replicas int64  `json:"replicas"`
			Registry string `json:"registry"`
		} `json:"dr"`
		FailoverAfterSeconds int64 `json:"failoverAfterSeconds"`
	}
	specOf(t, readOne(t, app+"/xr.yaml"), &in)

	checkManifest(t, r, in.Image, in.Replicas)

	pp := r.composed(t, "propagation-policy", "PropagationPolicy")
	terms := nested(t, pp, "spec", "forProvider", "placement", "clusterAffinities").([]any)
	want := []any{
		map[string]any{"affinityName": "primary", "clusterNames": []any{in.PrimaryCluster}},
		map[string]any{"affinityName": "dr", "clusterNames": []any{in.DRCluster}},
	}
	if !reflect.DeepEqual(terms, want) {
		t.Errorf("clusterAffinities %v, want %v", terms, want)
	}
	if got, _ := asInt(nested(t, pp, "spec", "forProvider", "failover", "application", "decisionConditions", "tolerationSeconds")); got != in.FailoverAfterSeconds {
		t.Errorf("failover tolerationSeconds %d, want the XR's %d", got, in.FailoverAfterSeconds)
	}

	// Normally the primary runs everything, as the XR says.
	res := planApp(t, app, r, nil)
	if got, want := placement(res), map[string]int64{in.PrimaryCluster: in.Replicas}; !reflect.DeepEqual(got, want) || res.AffinityTerm != "primary" {
		t.Errorf("placement %v with term %q, want %v with term primary", got, res.AffinityTerm, want)
	}
	if got := workImage(t, res, in.PrimaryCluster); got != in.Image {
		t.Errorf("%s runs %s, want %s", in.PrimaryCluster, got, in.Image)
	}
	if got := workReplicas(t, res, in.PrimaryCluster); got != in.Replicas {
		t.Errorf("%s runs %d replicas, want %d", in.PrimaryCluster, got, in.Replicas)
	}
	if got := workLabel(t, res, in.PrimaryCluster, clusterLabel); got != in.PrimaryCluster {
		t.Errorf("%s's copy has label %s=%q, want %q", in.PrimaryCluster, clusterLabel, got, in.PrimaryCluster)
	}

	// With the primary out of service, the DR term takes over, with the DR
	// cluster's registry and replicas.
	maintenance := map[string][]map[string]any{in.PrimaryCluster: {{"key": "flotilla.io/maintenance", "effect": "NoExecute"}}}
	res = planApp(t, app, r, maintenance)
	if _, ok := placement(res)[in.DRCluster]; !ok || len(res.Placement) != 1 || res.AffinityTerm != "dr" {
		t.Fatalf("with %s tainted: placement %v with term %q, want %s only with term dr (reasons %v)", in.PrimaryCluster, placement(res), res.AffinityTerm, in.DRCluster, res.Reasons)
	}
	if got, want := workImage(t, res, in.DRCluster), in.DR.Registry+"/"+in.Image; got != want {
		t.Errorf("%s runs %s, want %s", in.DRCluster, got, want)
	}
	if got := workReplicas(t, res, in.DRCluster); got != in.DR.Replicas {
		t.Errorf("%s runs %d replicas, want the XR's dr.replicas %d", in.DRCluster, got, in.DR.Replicas)
	}
	if got := workLabel(t, res, in.DRCluster, clusterLabel); got != in.DRCluster {
		t.Errorf("%s's copy has label %s=%q, want %q", in.DRCluster, clusterLabel, got, in.DRCluster)
	}

	// The term in use reaches the XR.
	obs := map[string]any{
		"affinityTerm": "dr",
		"placement":    map[string]any{in.DRCluster: in.Replicas},
		"health":       "Healthy",
	}
	r = render(t, tools, addr, app, observe(t, r.composed(t, "deployment", "Manifest"), obs))
	for from, to := range map[string]string{"affinityTerm": "activeTerm", "placement": "placement", "health": "health"} {
		if got := nested(t, r.XR, "status", to); !sameJSON(got, obs[from]) {
			t.Errorf("XR status.%s %v (%T), want %v", to, got, got, obs[from])
		}
	}
}
