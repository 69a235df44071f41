package terraform

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// statusConfig reads the status of cluster east with the given connection
// and outputs what a quick test of the API enablements needs.
func statusConfig(body string) string {
	return clusterConfig(`data "flotilla_cluster_status" "east" {
  name = "east"
` + body + `
}
output "serves_deployments" {
  value = anytrue([for e in coalesce(data.flotilla_cluster_status.east.api_enablements, []) :
    e.group_version == "apps/v1" && contains([for r in e.resources : r.kind], "Deployment")])
}`)
}

// TestClusterStatusDataSource reads a real member's status, then the status
// of the same member with its apiserver stopped, which is not an error.
func TestClusterStatusDataSource(t *testing.T) {
	t.Parallel()
	f, kubeconfig := startMembers(t, 1)
	m := f.Clusters[0]
	status := "data.flotilla_cluster_status.east"
	at := tfjsonpath.New[string]
	rec := &diagRecorder{}
	notConnected := regexp.MustCompile(`^cluster east is not connected: .*connection refused`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(rec),
		Steps: []resource.TestStep{
			{
				// A bad connection is an error, unlike an unreachable cluster.
				Config:      statusConfig(`  host = "http://10.0.0.1"` + "\n" + `  token = "t"`),
				ExpectError: wrappedMessage(`Attribute host of cluster "east": must use https`),
			},
			{
				Config: statusConfig(kubeconfigBody(kubeconfig, m)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(status, at("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(status, at("kubernetes_version"), knownvalue.StringExact("v1.35.4")),
					statecheck.ExpectKnownValue(status, at("conditions"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"type": knownvalue.StringExact("Ready"), "status": knownvalue.StringExact("True"),
							"reason": knownvalue.StringExact("ClusterReady"), "message": knownvalue.StringExact("cluster is healthy and ready to accept workloads"),
						}),
						knownvalue.ObjectPartial(map[string]knownvalue.Check{
							"type": knownvalue.StringExact("CompleteAPIEnablements"), "status": knownvalue.StringExact("True"),
							"reason": knownvalue.StringExact("Complete"),
						}),
					})),
					statecheck.ExpectKnownOutputValue("serves_deployments", knownvalue.Bool(true)),
					// An API-server-only member has no nodes and no pods.
					statecheck.ExpectKnownValue(status, at("node_summary"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"total_num": knownvalue.Int64Exact(0), "ready_num": knownvalue.Int64Exact(0),
					})),
					statecheck.ExpectKnownValue(status, at("resource_summary"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"allocatable": knownvalue.MapSizeExact(0),
						"allocated": knownvalue.MapExact(map[string]knownvalue.Check{
							"cpu": knownvalue.StringExact("0"), "memory": knownvalue.StringExact("0"), "pods": knownvalue.StringExact("0"),
						}),
						"allocating": knownvalue.MapExact(map[string]knownvalue.Check{
							"cpu": knownvalue.StringExact("0"), "memory": knownvalue.StringExact("0"), "pods": knownvalue.StringExact("0"),
						}),
					})),
				},
			},
			{
				// The same through host, token and CA.
				Config: statusConfig(tokenBody(m)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(status, at("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(status, at("kubernetes_version"), knownvalue.StringExact("v1.35.4")),
				},
			},
			{
				PreConfig: m.StopAPIServer,
				Config:    statusConfig(kubeconfigBody(kubeconfig, m)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(status, at("ready"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(status, at("conditions"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"type": knownvalue.StringExact("Ready"), "status": knownvalue.StringExact("False"),
							"reason": knownvalue.StringExact("ClusterNotReachable"), "message": knownvalue.StringRegexp(notConnected),
						}),
					})),
					statecheck.ExpectKnownValue(status, at("kubernetes_version"), knownvalue.Null()),
					statecheck.ExpectKnownValue(status, at("api_enablements"), knownvalue.Null()),
					statecheck.ExpectKnownValue(status, at("node_summary"), knownvalue.Null()),
					statecheck.ExpectKnownValue(status, at("resource_summary"), knownvalue.Null()),
					statecheck.ExpectKnownOutputValue("serves_deployments", knownvalue.Bool(false)),
				},
				Check: func(*terraform.State) error {
					if ds := rec.find("ReadDataSource", tfprotov6.DiagnosticSeverityWarning, regexp.MustCompile(".")); len(ds) > 0 {
						return fmt.Errorf("an unreachable cluster is reported as ready=false only, got %v", ds)
					}
					return nil
				},
			},
			{
				// A kubeconfig that is gone: not ready, with a warning.
				Config: statusConfig(fmt.Sprintf("  kubeconfig = { path = %s }", quoteHCL(filepath.Join(t.TempDir(), "gone")))),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(status, at("ready"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(status, at("conditions").AtSliceIndex(0).AtMapKey("reason"), knownvalue.StringExact("ClusterNotReachable")),
				},
				Check: func(*terraform.State) error {
					if ws := rec.find("ReadDataSource", tfprotov6.DiagnosticSeverityWarning, regexp.MustCompile(`^Cannot connect to cluster east: .*gone`)); len(ws) == 0 {
						return fmt.Errorf("want a warning about the missing kubeconfig, got %v", rec.all())
					}
					return nil
				},
			},
		},
	})
}
