package multicluster

import (
	"embed"
	"io/fs"
	"slices"
)

//go:embed crds/*.yaml
var crds embed.FS

// CRDs returns the CustomResourceDefinitions of ServiceExport and
// ServiceImport (multicluster.x-k8s.io/v1alpha1), as YAML documents in
// name order: the host serves them so that they can be propagated, and
// every member that exports or consumes a Service serves them too.
func CRDs() [][]byte {
	names, _ := fs.Glob(crds, "crds/*.yaml")
	slices.Sort(names)
	out := make([][]byte, 0, len(names))
	for _, n := range names {
		b, _ := crds.ReadFile(n)
		out = append(out, b)
	}
	return out
}
