package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPreviewMultiClusterServices: preview shows which clusters a
// ServiceExport exports from and a ServiceImport imports into (their
// placements), and says that the endpoints move only in continuous mode.
func TestPreviewMultiClusterServices(t *testing.T) {
	clusters, err := os.ReadFile("../../examples/preview/clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.ReadFile("../../examples/multi-cluster-services/host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The example names east, west and edge, and flotilla's policy group; preview
	// reads Karmada's, and its clusters are member1..3 (member3 is tainted).
	in := strings.NewReplacer("[east, west]", "[member1, member2]", "[edge]", "[member1]", "policy.flotilla.io", "policy.karmada.io").Replace(string(host))
	code, stdout, stderr := runPreview(t, string(clusters)+"\n---\n"+in, "-f", "-", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s\n%s", code, stderr, stdout)
	}
	got := map[string]*PreviewServices{}
	for _, r := range decodeOutput(t, stdout).Results {
		got[r.Template.Kind] = r.Services
	}
	want := map[string]*PreviewServices{
		"ServiceExport": {Role: "export", Clusters: []string{"member1", "member2"}, Note: "clusters of the placement that run the Service export its endpoints; they move only in continuous mode"},
		"ServiceImport": {Role: "import", Clusters: []string{"member1"}, Note: "each consumer gets Service derived-web with the exporting clusters' endpoints, in continuous mode only"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("services (-want +got):\n%s", d)
	}
	_, table, _ := runPreview(t, string(clusters)+"\n---\n"+in, "-f", "-")
	for _, line := range []string{"shop/web: exported from member1, member2", "shop/web: imported into member1"} {
		if !strings.Contains(table, line) {
			t.Errorf("table output lacks %q:\n%s", line, table)
		}
	}
}

// TestPreviewRefusesMultiClusterService: a MultiClusterService, in
// Karmada's group or flotilla's, is refused with a message naming
// continuous mode and exit code 2, never planned as an ordinary template
// copied to the members; the Service beside it is still planned.
func TestPreviewRefusesMultiClusterService(t *testing.T) {
	clusters, err := os.ReadFile("../../examples/preview/clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const in = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: shop}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Service}
  - {apiVersion: networking.karmada.io/v1alpha1, kind: MultiClusterService}
  - {apiVersion: networking.flotilla.io/v1alpha1, kind: MultiClusterService}
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80}], selector: {app: web}}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: web, namespace: shop}
spec: {types: [CrossCluster]}
---
apiVersion: networking.flotilla.io/v1alpha1
kind: MultiClusterService
metadata: {name: api, namespace: shop}
spec: {types: [CrossCluster]}
`
	code, stdout, stderr := runPreview(t, string(clusters)+"\n---\n"+in, "-f", "-", "-o", "json")
	if code != ExitBadInput || !strings.Contains(stderr, "MultiClusterService acts only in continuous mode") {
		t.Fatalf("exit %d, stderr %q; want 2 and the continuous mode line", code, stderr)
	}
	refused := 0
	for _, r := range decodeOutput(t, stdout).Results {
		switch r.Template.Kind {
		case "MultiClusterService":
			refused++
			if !r.Refused || len(r.Placement) != 0 || len(r.Rendered) != 0 || !strings.Contains(r.Error, "only the continuous control plane does") {
				t.Errorf("%s: %+v, want refused with no placement, naming continuous mode", r.Template, r)
			}
		case "Service":
			if r.Error != "" || len(r.Placement) != 1 || r.Placement[0].Cluster != "member1" {
				t.Errorf("the Service beside them: %+v, want placed on member1", r)
			}
		}
	}
	if refused != 2 {
		t.Errorf("%d MultiClusterServices refused, want both groups' 2", refused)
	}
}
