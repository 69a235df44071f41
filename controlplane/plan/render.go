package plan

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// BindingInput is what RenderBinding renders: a template and the binding
// that places it.
type BindingInput struct {
	// Template is the resource template.
	Template *unstructured.Unstructured
	// Binding places the template: its Clusters (name and replicas), the
	// GracefulEvictionTasks whose preserved state a cluster receives, and
	// the Placement whose replica scheduling type revises replicas
	// (Duplicated when unset).
	Binding *api.ResourceBindingSpec
	// Cluster returns a cluster Binding names; an error fails the render.
	Cluster func(name string) (*api.Cluster, error)
	// OverridePolicies and ClusterOverridePolicies are the candidates;
	// those matching Template apply, in Karmada's order.
	OverridePolicies        []api.OverridePolicy
	ClusterOverridePolicies []api.ClusterOverridePolicy
	// Fleet names the fleet in the ownership labels.
	Fleet string
	// Interpreter is the fleet's resource interpreter (customizations
	// included); nil is the built-in one.
	Interpreter *interpret.Interpreter
	// Only, when set, renders that cluster's work alone (render.Input.Only);
	// Cluster is then asked for that cluster only, as the others' facts
	// change nothing in its work.
	Only string
}

// RenderBinding renders the template for each cluster of its binding as
// it is applied there: replicas revised, the failover's preserved labels
// and the matching overrides applied, ownership labels set. It is the one
// render step of both drivers: Plan renders through it for the synchronous
// driver and preview, the binding controller for the continuous one (which
// is what the Crossplane provider reports hashes of). A binding with no
// clusters renders nothing.
func RenderBinding(in BindingInput) (map[string]render.Work, error) {
	if len(in.Binding.Clusters) == 0 {
		return nil, nil
	}
	targets := make([]render.Target, 0, len(in.Binding.Clusters))
	for _, tc := range in.Binding.Clusters {
		if in.Only != "" && tc.Name != in.Only {
			targets = append(targets, render.Target{Cluster: &api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: tc.Name}}, Replicas: tc.Replicas})
			continue
		}
		c, err := in.Cluster(tc.Name)
		if err != nil {
			return nil, err
		}
		targets = append(targets, render.Target{Cluster: c, Replicas: tc.Replicas, Labels: render.PreservedLabels(in.Binding, tc.Name)})
	}
	scheduling := api.ReplicaSchedulingTypeDuplicated
	if p := in.Binding.Placement; p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType != "" {
		scheduling = p.ReplicaScheduling.ReplicaSchedulingType
	}
	if in.Interpreter.HasComponents(in.Template) {
		// A multi-component workload is placed whole: Karmada revises
		// replicas only for a binding with replicas, which it has not.
		// The kind decides, not the binding's components, which anyone
		// who may write the binding could set.
		scheduling = api.ReplicaSchedulingTypeDuplicated
	}
	return render.Render(render.Input{
		Template:          in.Template,
		Clusters:          targets,
		Overrides:         policy.MatchOverrides(in.Template, in.OverridePolicies, in.ClusterOverridePolicies),
		Fleet:             in.Fleet,
		ReplicaScheduling: scheduling,
		Interpreter:       in.Interpreter,
		Only:              in.Only,
	})
}
