package cli

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// PreviewServices says, for a ServiceExport or ServiceImport, which
// clusters would export the Service (those of the placement that run it)
// or consume it. The endpoints themselves move only in continuous mode.
type PreviewServices struct {
	// Role is "export" or "import".
	Role string `json:"role"`
	// Clusters are the exporting or consuming clusters, in placement order.
	Clusters []string `json:"clusters"`
	// Note says what a preview cannot show.
	Note string `json:"note"`
}

// previewServices is the services view of r, nil for other kinds.
func previewServices(r plan.Result) *PreviewServices {
	gk := schema.GroupKind{Group: r.Template.Group, Kind: r.Template.Kind}
	if !multicluster.IsMCSKind(gk) || r.Err != nil || r.Policy == nil {
		return nil
	}
	s := &PreviewServices{Role: "export", Clusters: []string{},
		Note: "clusters of the placement that run the Service export its endpoints; they move only in continuous mode"}
	if gk == multicluster.ServiceImportGK {
		s.Role = "import"
		s.Note = "each consumer gets Service " + multicluster.DerivedPrefix + r.Template.Name + " with the exporting clusters' endpoints, in continuous mode only"
	}
	for _, tc := range r.Placement {
		s.Clusters = append(s.Clusters, tc.Name)
	}
	return s
}

// writeServices writes the services view of a result in the table output.
func writeServices(w io.Writer, r PreviewResult) {
	s := r.Services
	if s == nil {
		return
	}
	verb := "exported from"
	if s.Role == "import" {
		verb = "imported into"
	}
	clusters := strings.Join(s.Clusters, ", ")
	if clusters == "" {
		clusters = "no cluster"
	}
	fmt.Fprintf(w, "\n# %s: %s %s (%s)\n", r.Template, verb, clusters, s.Note)
}

// refuseMultiClusterService turns the plan of a MultiClusterService
// (Karmada's group or flotilla's) into a refusal that names continuous
// mode: it moves the providers' endpoints into the consumers between
// runs, and copying the object itself to members, as an ordinary template
// would be, does nothing there. The continuous control plane serves it on
// the host under networking.flotilla.io. It reports whether pr was refused.
func refuseMultiClusterService(pr *PreviewResult) bool {
	gv, _ := schema.ParseGroupVersion(pr.Template.APIVersion)
	gk := schema.GroupKind{Group: gv.Group, Kind: pr.Template.Kind}
	if gk != multicluster.MultiClusterServiceGK && gk != multicluster.FlotillaMultiClusterServiceGK {
		return false
	}
	pr.Placement, pr.Rendered, pr.Reasons, pr.Rollout, pr.Services = []PreviewPlacement{}, map[string]map[string]any{}, map[string]string{}, nil, nil
	pr.Refused = true
	pr.Error = "MultiClusterService: " + multicluster.ErrContinuousOnly.Error() +
		"; declare it as networking.flotilla.io/v1alpha1 MultiClusterService on the host of the continuous control plane (no PropagationPolicy: the Service's placement decides its clusters), as docs/guides/multi-cluster-services.md shows"
	return true
}
