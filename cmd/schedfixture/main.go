// Command schedfixture writes the scheduler's benchmark fleet and bindings
// (controlplane/scheduler/benchfleet) as Karmada JSON, so that Karmada's
// scheduler core and flotilla's are measured on one input
// (scripts/bench-karmada.sh): clusters-N.json, a list of
// cluster.karmada.io/v1alpha1 Clusters per fleet size, and bindings.json,
// the work.karmada.io/v1alpha2 ResourceBindings by strategy name.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler/benchfleet"
)

func main() {
	out := flag.String("out", "", "directory to write the fixture into (created if missing)")
	sizes := flag.String("sizes", "100,1000,5000", "fleet sizes, comma-separated")
	flag.Parse()
	if err := write(*out, *sizes); err != nil {
		fmt.Fprintln(os.Stderr, "schedfixture:", err)
		os.Exit(1)
	}
}

// write writes the fixture for each size into dir.
func write(dir, sizes string) error {
	if dir == "" {
		return fmt.Errorf("-out is required")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-sizes: %q is not a positive cluster count", s)
		}
		if err := writeJSON(filepath.Join(dir, fmt.Sprintf("clusters-%d.json", n)), benchfleet.Clusters(n)); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dir, "bindings.json"), benchfleet.Cases())
}

func writeJSON(path string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
