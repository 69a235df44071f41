package shared

import (
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// SystemNamespace holds flotilla's own objects in the host, such as
// member credentials; like the execution namespaces, it never holds
// templates (it is among DefaultReservedNamespaces).
const SystemNamespace = "flotilla-system"

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
