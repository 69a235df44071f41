package shared

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// SystemNamespace holds flotilla's own objects in the host (in flotilla's
// groups, the member credentials too); like the execution namespaces, it
// never holds templates (it is among DefaultReservedNamespaces).
const SystemNamespace = "flotilla-system"

// CredentialsNamespace is the one host namespace whose Secrets the control
// plane reads with its own identity: the Clusters' credentials and its Work
// signing key. It follows the API groups (apis.Use, chosen once at start):
// SystemNamespace in flotilla's, karmada-cluster in Karmada's, where
// Karmada's users keep their Clusters' Secrets.
func CredentialsNamespace() string { return apis.Current().CredentialsNamespace() }

// AnnotationTemplateSpecHash records, on a ResourceBinding, the
// policy.SpecificationHash of the template the detector last wrote it for,
// so that a binding claimed by a Lazy policy is rewritten only when the
// template changes.
const AnnotationTemplateSpecHash = "propagationpolicy.flotilla.io/template-spec-hash"

// RecordedClaim is the claim a detector's binding records; nil for no
// binding, an attached one (the distributor's, which no policy claims) or
// a label that names no propagation policy.
func RecordedClaim(rb *workv1.ResourceBinding) *policy.ClaimRef {
	if rb == nil || Attached(rb) {
		return nil
	}
	ref, ok := policy.ParseClaimRef(rb.Labels[hoststore.LabelPolicy])
	if !ok {
		return nil
	}
	return &ref
}

// NamespaceKind is the core Namespace kind: a Namespace template named
// like a reserved namespace is never propagated.
var NamespaceKind = schema.GroupKind{Kind: "Namespace"}

// skippedKinds are the kinds never detected when Options.TemplateKinds is
// empty (Karmada skips events and its own groups the same way): records of
// what happened (Events), the host's own coordination (Leases, flotilla's
// leader election among them) and the host's nodes, which are not a
// workload. Both families of API groups a control plane may serve
// (*.flotilla.io and *.karmada.io, apis.Groups) are skipped as well,
// whichever this process serves: its own kinds steer it and are never
// propagated, and the other family's belong to another control plane.
var skippedKinds = []schema.GroupKind{
	{Kind: "Event"},
	{Group: "events.k8s.io", Kind: "Event"},
	{Group: "coordination.k8s.io", Kind: "Lease"},
	{Kind: "Node"},
}

// SkippedKind reports whether gk is never a template kind when
// Options.TemplateKinds is empty: discovery leaves it out, and the trust
// checks refuse a binding naming it.
func SkippedKind(gk schema.GroupKind) bool {
	return apis.FlotillaGroups.Owns(gk.Group) || apis.KarmadaGroups.Owns(gk.Group) || slices.Contains(skippedKinds, gk)
}
