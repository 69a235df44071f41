package cli

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

// TestGetFromCachePrintsColumns is `get deployments -A` from the cache as
// printed: the Deployment columns a member prints (READY, UP-TO-DATE,
// AVAILABLE) with CLUSTER and NAMESPACE, every member's rows, and -C
// keeping one member; -o json still prints whole objects, annotated.
func TestGetFromCachePrintsColumns(t *testing.T) {
	c := filledCache(t, 2, 3)
	srv := searchServer(t, c)
	u := srv.URL + fleetview.SearchPrefix + "/apis/apps/v1/deployments"
	get := func(o getCommand) string {
		t.Helper()
		o.stderr, o.allNamespaces, o.source = io.Discard, true, sourceCache
		results, err := o.readCache(srv.Client(), u, benchDeployments, "")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := o.print(results, &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	out := get(getCommand{})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if want, got := []string{"CLUSTER", "NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, strings.Fields(lines[0]); !slices.Equal(got, want) {
		t.Fatalf("header %v, want %v:\n%s", got, want, out)
	}
	if len(lines) != 7 {
		t.Fatalf("%d rows, want 6 (3 Deployments in each of 2 members):\n%s", len(lines)-1, out)
	}
	// benchDeployment: 3 desired, 2 ready, 3 up to date, 2 available.
	if got := strings.Fields(lines[1])[:6]; !slices.Equal(got, []string{"member-000", "ns-0", "app-0000", "2/3", "3", "2"}) {
		t.Errorf("first row %v:\n%s", got, out)
	}
	out = get(getCommand{getOptions: getOptions{clusters: "member-001"}})
	if strings.Contains(out, "member-000") || strings.Count(out, "member-001") != 3 {
		t.Errorf("-C member-001 prints other members or misses rows:\n%s", out)
	}
	out = get(getCommand{getOptions: getOptions{output: "json"}})
	if strings.Count(out, `"`+ClusterAnnotation+`": "member-00`) != 6 || !strings.Contains(out, `"kind": "Deployment"`) {
		t.Errorf("-o json: want six whole Deployments, annotated:\n%.2000s", out)
	}
}
