package render

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/override"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// Input is one template with its scheduling result.
type Input struct {
	// Template is the resource template as the user wrote it (or as the hub
	// apiserver returned it; server fields are stripped). It is not changed.
	Template *unstructured.Unstructured
	// Clusters are the clusters the scheduler selected, with the replicas
	// each received.
	Clusters []Target
	// Overrides are the override policies that apply to Template, in
	// application order, as policy.MatchOverrides returns them.
	Overrides []policy.AppliedOverride
	// Fleet is the name stamped in LabelFleet; it must be a valid label
	// value.
	Fleet string
	// ReplicaScheduling is the placement's replica scheduling type. Divided
	// revises each work's replicas to the cluster's share; Duplicated (and
	// empty, Karmada's default) keeps the template's replicas everywhere.
	ReplicaScheduling api.ReplicaSchedulingType
	// Interpreter revises a divided workload's replicas: the built-in
	// table, or nil for it, extended by customizations.
	Interpreter *interpret.Interpreter
	// Only, when set, renders that cluster's work alone; every cluster of
	// Clusters still counts where the clusters share something (a divided
	// Job's completions), so the work is the one a full render gives. A
	// caller checking one cluster's work (the execution controller) then
	// does not render the whole fleet.
	Only string
}

// Target is one selected cluster and its share of the replicas.
type Target struct {
	// Cluster is the member cluster; override rules match against it.
	Cluster *api.Cluster
	// Replicas is the cluster's share, used when scheduling is Divided.
	Replicas int32
	// Labels are merged into the object after the overrides and before
	// flotilla's ownership labels (which they cannot replace): the state a
	// failover preserved for this cluster (PreservedLabels).
	Labels map[string]string
}

// Work is the rendered manifest for one cluster.
type Work struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Object is the full object to apply in the member.
	Object *unstructured.Unstructured
	// Applied lists the override rules that changed Object.
	Applied override.Applied
	// Hash is Object's AnnotationRenderedHash.
	Hash string
}

// Render produces the work for every cluster in in.Clusters, keyed by
// cluster name. For each cluster, in Karmada's order: replicas are revised
// (Divided only), override rules are applied, server-populated fields are
// stripped, and ownership labels and annotations are stamped. The template
// is never modified and the same input renders the same bytes.
func Render(in Input) (map[string]Work, error) {
	if err := validateInput(in); err != nil {
		return nil, err
	}
	ref := api.TemplateRefOf(in.Template)
	divided := in.ReplicaScheduling == api.ReplicaSchedulingTypeDivided
	var completions map[string]int64
	if divided {
		var err error
		if completions, err = jobCompletions(in.Template, in.Clusters); err != nil {
			return nil, fmt.Errorf("render %s: divide job completions: %w", ref, err)
		}
	}
	works := make(map[string]Work, len(in.Clusters))
	for _, t := range in.Clusters {
		if in.Only != "" && t.Cluster.Name != in.Only {
			continue
		}
		w, err := renderOne(in, ref, t, divided, completions)
		if err != nil {
			return nil, fmt.Errorf("render %s for cluster %s: %w", ref, t.Cluster.Name, err)
		}
		works[t.Cluster.Name] = w
	}
	return works, nil
}

func renderOne(in Input, ref api.TemplateRef, t Target, divided bool, completions map[string]int64) (Work, error) {
	obj := in.Template.DeepCopy()
	if divided {
		if err := in.Interpreter.ReviseReplica(obj, int64(t.Replicas)); err != nil {
			return Work{}, fmt.Errorf("revise replicas: %w", err)
		}
		if n, ok := completions[t.Cluster.Name]; ok {
			if err := interpret.SetSpecIfPresent(obj, "completions", n); err != nil {
				return Work{}, fmt.Errorf("revise completions: %w", err)
			}
		}
	}
	// Overrides come after replica revision, so an override can still pin
	// replicas in one cluster, as in Karmada.
	applied, err := override.Apply(obj, t.Cluster, in.Overrides)
	if err != nil {
		return Work{}, err
	}
	if len(t.Labels) > 0 {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range t.Labels {
			labels[k] = v
		}
		obj.SetLabels(labels)
	}
	interpret.Prune(obj)
	if err := stampOwnership(obj, ref, in.Fleet); err != nil {
		return Work{}, err
	}
	return Work{
		Cluster: t.Cluster.Name,
		Object:  obj,
		Applied: applied,
		Hash:    obj.GetAnnotations()[AnnotationRenderedHash],
	}, nil
}

// ErrCustomizationNotTemplate refuses a ResourceInterpreterCustomization
// given as a resource template: propagating it to members would teach
// nothing to flotilla, so it is refused rather than copied.
var ErrCustomizationNotTemplate = errors.New("a ResourceInterpreterCustomization teaches flotilla a kind and is not a template to propagate: " +
	"give it to `preview` as a document, or create it in the control plane's host as config.flotilla.io/v1alpha1 ResourceInterpreterCustomization; " +
	"Terraform does not read customizations yet (see the guide \"Custom resources and HPA\")")

// validateInput rejects input that would render objects flotilla could not
// own or find again.
func validateInput(in Input) error {
	if in.Template == nil {
		return errors.New("render: template is nil")
	}
	ref := api.TemplateRefOf(in.Template)
	if ref.Version == "" || ref.Kind == "" || ref.Name == "" {
		return fmt.Errorf("render template %q: apiVersion, kind and metadata.name must be set", ref)
	}
	if gk := in.Template.GroupVersionKind().GroupKind(); gk.Group == api.ConfigGroup && gk.Kind == api.KindResourceInterpreterCustomization {
		return fmt.Errorf("render %s: %w", ref, ErrCustomizationNotTemplate)
	}
	if in.Fleet == "" {
		return fmt.Errorf("render %s: fleet is empty", ref)
	}
	if msgs := validation.IsValidLabelValue(in.Fleet); len(msgs) > 0 {
		return fmt.Errorf("render %s: fleet %q is not a valid label value: %s", ref, in.Fleet, strings.Join(msgs, "; "))
	}
	switch in.ReplicaScheduling {
	case "", api.ReplicaSchedulingTypeDuplicated, api.ReplicaSchedulingTypeDivided:
	default:
		return fmt.Errorf("render %s: unknown replica scheduling type %q", ref, in.ReplicaScheduling)
	}
	seen := make(map[string]bool, len(in.Clusters))
	for i, t := range in.Clusters {
		if t.Cluster == nil || t.Cluster.Name == "" {
			return fmt.Errorf("render %s: cluster %d has no name", ref, i)
		}
		if seen[t.Cluster.Name] {
			return fmt.Errorf("render %s: cluster %s is listed twice", ref, t.Cluster.Name)
		}
		if t.Replicas < 0 {
			return fmt.Errorf("render %s: cluster %s has negative replicas %d", ref, t.Cluster.Name, t.Replicas)
		}
		seen[t.Cluster.Name] = true
	}
	return nil
}
