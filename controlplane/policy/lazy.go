package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// SpecificationHash is the hex SHA-256 of tmpl without the parts that change
// without anyone changing the template: status, metadata.managedFields,
// metadata.resourceVersion and metadata.generation (Karmada's
// eventfilter.SpecificationChanged ignores the same, generation aside, which
// only follows the spec). Equal hashes mean the template has not changed.
func SpecificationHash(tmpl *unstructured.Unstructured) (string, error) {
	view := tmpl.DeepCopy()
	unstructured.RemoveNestedField(view.Object, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation"} {
		unstructured.RemoveNestedField(view.Object, "metadata", f)
	}
	// encoding/json sorts map keys, so equal objects hash equally.
	raw, err := json.Marshal(view.Object)
	if err != nil {
		return "", fmt.Errorf("encode %s %s/%s: %w", tmpl.GetKind(), tmpl.GetNamespace(), tmpl.GetName(), err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// HeldLazily reports whether a template's binding keeps what it was last
// written with instead of following its policy now, as Karmada's detector
// does for activationPreference Lazy (ApplyPolicy skips the binding when
// the change did not come from the template): the claim is the one the
// binding records (prev), its policy is Lazy, and the template's
// specification hash is the one the binding was written for (prevHash).
// A new claim, a changed template or a binding with no recorded hash is
// written at once. With Lazy, policy changes therefore reach a template on
// its next change, and a Lazy policy that newly claims or preempts a
// template takes effect at once (Karmada would hold the old binding).
func HeldLazily(claim Claim, prev *ClaimRef, prevHash, templateHash string) bool {
	return prev != nil && *prev == claim.Ref() && claim.Spec != nil &&
		claim.Spec.ActivationPreference == api.LazyActivation &&
		prevHash != "" && prevHash == templateHash
}
