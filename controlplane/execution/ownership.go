package execution

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// owner is who a live object in a member belongs to, as its labels and
// annotations tell.
type owner int

const (
	// ownedByTemplate: this fleet's object for this template.
	ownedByTemplate owner = iota
	// ownedByOtherFleet: a flotilla object of another fleet.
	ownedByOtherFleet
	// implicitNamespace: a namespace this fleet created for a namespaced
	// object. A Namespace template of the same fleet may claim it.
	implicitNamespace
	// notOwned: anything else, including a flotilla object of this fleet
	// whose template annotation names another template.
	notOwned
)

// ownerOf classifies live against the fleet and the template. The template
// is compared without its version (a template moved to a new API version is
// still the same object), and an annotation that does not parse counts as
// another template's.
func ownerOf(live *unstructured.Unstructured, fleet string, ref api.TemplateRef) owner {
	labels := live.GetLabels()
	if labels[render.LabelManagedBy] != render.ManagedByFlotilla {
		return notOwned
	}
	if f := labels[render.LabelFleet]; f != fleet {
		if f == "" {
			return notOwned
		}
		return ownedByOtherFleet
	}
	annotation, ok := live.GetAnnotations()[render.AnnotationTemplate]
	if !ok {
		if phaseOf(ref) == phaseNamespace {
			return implicitNamespace
		}
		return notOwned
	}
	got, err := api.ParseTemplateRef(annotation)
	if err != nil || !got.SameTemplate(ref) {
		return notOwned
	}
	return ownedByTemplate
}

// Owns reports whether live is this fleet's object for the template ref,
// as flotilla's labels and template annotation on it say: what the
// execution applied, and nothing a tenant or another fleet put in the
// member under the same name.
func Owns(live *unstructured.Unstructured, fleet string, ref api.TemplateRef) bool {
	return ownerOf(live, fleet, ref) == ownedByTemplate
}

// ErrConflict is wrapped by every refusal to apply over an object flotilla
// does not own (ConflictError).
var ErrConflict = errors.New("conflict with an object flotilla does not own")

// ConflictError is the refusal to apply over an existing object that is not
// this fleet's object for this template.
type ConflictError struct {
	// Cluster is the member cluster.
	Cluster string
	// Object is the object in the way.
	Object api.TemplateRef
	// Fleet is the fleet that wanted to apply it.
	Fleet string
	// OtherFleet is set when the object belongs to another flotilla fleet;
	// such an object is never adopted.
	OtherFleet string
}

// Error names the cluster, the object and what would let the apply go on.
func (e *ConflictError) Error() string {
	if e.OtherFleet != "" {
		return fmt.Sprintf("cluster %s: %s belongs to flotilla fleet %q, not %q; flotilla never adopts objects across fleets",
			e.Cluster, e.Object.Describe(), e.OtherFleet, e.Fleet)
	}
	return fmt.Sprintf("cluster %s: %s exists and is not managed by flotilla fleet %q; set the propagation policy's conflictResolution (conflict_resolution in Terraform) to Overwrite to adopt it",
		e.Cluster, e.Object.Describe(), e.Fleet)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
