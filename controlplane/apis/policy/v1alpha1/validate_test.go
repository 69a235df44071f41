package v1alpha1_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
)

// TestValidateAssociation: the one check the admission webhook and the
// policy-validation controller share refuses association: true on both
// propagation policy kinds, naming the field, and accepts false.
func TestValidateAssociation(t *testing.T) {
	spec := func(association bool) api.PropagationSpec {
		return api.PropagationSpec{
			Association:       association,
			ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
		}
	}
	for _, association := range []bool{false, true} {
		pp := &v1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod"}, Spec: spec(association)}
		cpp := &v1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: spec(association)}
		for kind, errs := range map[string][]string{"PropagationPolicy": errStrings(pp.Validate()), "ClusterPropagationPolicy": errStrings(cpp.Validate())} {
			want := []string(nil)
			if association {
				want = []string{"spec.association: Forbidden: " + api.AssociationRefusal}
			}
			if len(errs) != len(want) || (len(want) == 1 && errs[0] != want[0]) {
				t.Errorf("%s with association %v: errors %q, want %q", kind, association, errs, want)
			}
		}
	}
}

// errStrings is each error's message.
func errStrings[E interface{ Error() string }](errs []E) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
