package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// TestPreviewRolloutCustomization previews examples/interpreter: the Argo
// Rollout customization divides the Rollout 2:1 by static weights, and the
// statuses its members would report, reflected and aggregated by the same
// customization, add back up to the template's replicas.
func TestPreviewRolloutCustomization(t *testing.T) {
	code, stdout, stderr := runPreview(t, "", "-f", "../../examples/preview/clusters.yaml", "-f", "../../examples/interpreter", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	out := decodeOutput(t, stdout)
	if len(out.Results) != 1 || out.Results[0].Template.Kind != "Rollout" {
		t.Fatalf("want one Rollout result, got %+v", out.Results)
	}
	r := out.Results[0]
	if diff := cmp.Diff([]PreviewPlacement{{Cluster: "member1", Replicas: 4}, {Cluster: "member2", Replicas: 2}}, r.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}

	in := interpreterFrom(t, "../../examples/interpreter/argo-rollout.yaml")
	var members []interpret.Member
	for cluster, o := range r.Rendered {
		live := &unstructured.Unstructured{Object: o}
		replicas, _, _ := unstructured.NestedFieldNoCopy(o, "spec", "replicas")
		if want := map[string]float64{"member1": 4, "member2": 2}[cluster]; replicas != want {
			t.Errorf("%s renders spec.replicas %v, want %v", cluster, replicas, want)
		}
		// What the member's Argo controller would report once rolled out.
		n := int64(replicas.(float64))
		_ = unstructured.SetNestedMap(live.Object, map[string]any{
			"replicas": n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n, "phase": "Healthy",
		}, "status")
		status, err := in.ReflectStatus(live)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, interpret.Member{Cluster: cluster, Applied: true, Status: status})
	}
	tmpl := &unstructured.Unstructured{}
	tmpl.SetAPIVersion("argoproj.io/v1alpha1")
	tmpl.SetKind("Rollout")
	tmpl.SetNamespace("shop")
	tmpl.SetName("checkout")
	agg, err := in.AggregateStatus(tmpl, members)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": int64(6), "updatedReplicas": int64(6), "readyReplicas": int64(6), "availableReplicas": int64(6), "phase": "Healthy"}
	if diff := cmp.Diff(want, agg); diff != "" {
		t.Errorf("aggregated status (-want +got):\n%s", diff)
	}
}

// TestPreviewRefusesBrokenCustomization checks that a customization whose
// script does not compile stops the preview with its name, operation and
// line, and that without the customization a Rollout is not divided.
func TestPreviewRefusesBrokenCustomization(t *testing.T) {
	dir := t.TempDir()
	broken := "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: broken-rollout}\n" +
		"spec:\n  target: {apiVersion: argoproj.io/v1alpha1, kind: Rollout}\n  customizations:\n    replicaResource:\n      luaScript: |\n        function GetReplicas(obj)\n          return obj.spec.replicas +\n        end\n"
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runPreview(t, "", "-f", "../../examples/preview/clusters.yaml", "-f", "../../examples/interpreter/rollout.yaml", "-f", dir, "-o", "json")
	if code != ExitBadInput {
		t.Fatalf("exit %d, want %d; stderr: %s", code, ExitBadInput, stderr)
	}
	out := decodeOutput(t, stdout)
	for _, want := range []string{`"broken-rollout"`, "replicaResource", "replicaResource line:3"} {
		if !strings.Contains(out.Error, want) {
			t.Errorf("error %q does not contain %q", out.Error, want)
		}
	}
	if len(out.Results) != 0 {
		t.Errorf("results despite the broken customization: %+v", out.Results)
	}

	code, stdout, stderr = runPreview(t, "", "-f", "../../examples/preview/clusters.yaml", "-f", "../../examples/interpreter/rollout.yaml", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	if p := decodeOutput(t, stdout).Results[0].Placement; len(p) != 2 || p[0].Replicas != 0 || p[1].Replicas != 0 {
		t.Errorf("placement of a Rollout without a customization = %+v, want both clusters with the whole object (no replicas divided)", p)
	}
}

func interpreterFrom(t *testing.T, path string) *interpret.Interpreter {
	t.Helper()
	in, err := interpret.New(apitest.ReadInterpreters(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestPreviewComponents previews one input holding a FlinkDeployment-
// shaped kind whose customization scripts componentResource, a kind whose
// componentResource script returns a component without a name, and
// ordinary kinds. The job goes whole (its replicaRevision script is not
// run) to the one cluster where its JobManager and four TaskManagers all
// fit; the broken kind is refused by its customization's name and
// operation; the Deployment and ConfigMap are previewed as usual.
func TestPreviewComponents(t *testing.T) {
	code, stdout, stderr := runPreview(t, "", "-f", "testdata/components", "-o", "json")
	if code != ExitUnschedulable {
		t.Fatalf("exit %d, want %d (one template not scheduled); stderr: %s", code, ExitUnschedulable, stderr)
	}
	got := map[string]PreviewResult{}
	for _, r := range decodeOutput(t, stdout).Results {
		got[r.Template.Kind] = r
	}
	job := got["FlinkDeployment"]
	if diff := cmp.Diff([]PreviewPlacement{{Cluster: "south"}}, job.Placement); diff != "" || job.Error != "" {
		t.Errorf("FlinkDeployment: error %q, placement (-want +got):\n%s", job.Error, diff)
	}
	if len(job.Components) != 2 || job.Components[0].Name != "jobmanager" || job.Components[1].Replicas != 4 {
		t.Errorf("FlinkDeployment components = %+v, want jobmanager and 4 taskmanagers", job.Components)
	}
	if n, _, _ := unstructured.NestedFieldNoCopy(job.Rendered["south"], "spec", "taskManager", "replicas"); n != float64(4) {
		t.Errorf("south renders %v TaskManagers, want the template's 4 (placed whole, not revised)", n)
	}
	bad := got["Pipeline"]
	if want := `customization "pipeline": componentResource: GetComponents returned component [0]: name`; !strings.Contains(bad.Error, want) || len(bad.Placement) != 0 {
		t.Errorf("Pipeline: error %q placement %v, want an error containing %q and no placement", bad.Error, bad.Placement, want)
	}
	for _, kind := range []string{"Deployment", "ConfigMap"} {
		if r := got[kind]; r.Error != "" || len(r.Placement) != 3 || len(r.Rendered) != 3 {
			t.Errorf("%s: error %q, placement %v; want all three clusters", kind, r.Error, r.Placement)
		}
	}
}

// TestPreviewComponentsTable reads the table of the same input: the job
// placed whole shows the cluster with each component it runs there, not
// the meaningless "south=0" of a template without divisible replicas.
func TestPreviewComponentsTable(t *testing.T) {
	_, stdout, stderr := runPreview(t, "", "-f", "testdata/components")
	var row string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "FlinkDeployment analytics/job") {
			row = line
		}
	}
	if want := "south[jobmanager=1,taskmanager=4]"; !strings.Contains(row, want) || strings.Contains(row, "south=0") {
		t.Errorf("FlinkDeployment row %q, want placement %q; stderr: %s", row, want, stderr)
	}
}
