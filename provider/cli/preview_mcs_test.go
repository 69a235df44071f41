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
