package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler/benchfleet"
)

// TestFixtureDecidesAsTheFleetItIsWrittenFrom checks that the JSON both
// halves of scripts/bench-karmada.sh read keeps what the scheduler reads:
// every binding of the fixture, read back, is scheduled over the fixture's
// clusters exactly as the in-process fleet schedules it, so the side-by-side
// figures are for the fleet the benchmarks name.
func TestFixtureDecidesAsTheFleetItIsWrittenFrom(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir, "100"); err != nil {
		t.Fatal(err)
	}
	var list []api.Cluster
	readJSON(t, filepath.Join(dir, "clusters-100.json"), &list)
	var cases []benchfleet.Case
	readJSON(t, filepath.Join(dir, "bindings.json"), &cases)
	want := benchfleet.Cases()
	if len(cases) != len(want) {
		t.Fatalf("the fixture has %d bindings, benchfleet %d", len(cases), len(want))
	}
	read := make([]*api.Cluster, len(list))
	for i := range list {
		read[i] = &list[i]
	}
	built := benchfleet.Clusters(100)
	for i, c := range cases {
		if c.Name != want[i].Name {
			t.Fatalf("binding %d is %q, want %q", i, c.Name, want[i].Name)
		}
		got, err := scheduler.Schedule(read, scheduler.BindingFor(&c.Binding, *c.Binding.Spec.Placement))
		if err != nil {
			t.Fatalf("%s over the fixture: %v", c.Name, err)
		}
		exp, err := scheduler.Schedule(built, scheduler.BindingFor(&want[i].Binding, *want[i].Binding.Spec.Placement))
		if err != nil {
			t.Fatalf("%s over benchfleet: %v", c.Name, err)
		}
		if len(got.Clusters) == 0 {
			t.Fatalf("%s places nothing", c.Name)
		}
		if diff := cmp.Diff(exp.Clusters, got.Clusters); diff != "" {
			t.Errorf("%s decides otherwise over the fixture (-benchfleet +fixture):\n%s", c.Name, diff)
		}
	}
}

func TestWriteRefusesBadSizes(t *testing.T) {
	if err := write(t.TempDir(), "100,zero"); err == nil {
		t.Fatal("a size that is not a number was accepted")
	}
	if err := write("", "100"); err == nil {
		t.Fatal("no -out was accepted")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
