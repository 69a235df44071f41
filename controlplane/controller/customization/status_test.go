package customization

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// TestReadyCondition: a budget overrun outranks a load refusal, which
// outranks loaded; a kind still loading gets no condition yet.
func TestReadyCondition(t *testing.T) {
	ric := &configv1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "spin", Generation: 3},
		Spec:       api.ResourceInterpreterCustomizationSpec{Target: api.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"}},
	}
	exceeded := &interpret.BudgetExceeded{
		Kind: schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}, Customization: "spin", Operation: "replicaResource",
		Err: errors.New(`resource interpreter customization "spin": replicaResource: replicaResource:2: budget exhausted: more than 2000000 instructions`),
	}
	cases := []struct {
		name   string
		report hoststore.CustomizationReport
		want   *metav1.Condition
	}{
		{"loading", hoststore.CustomizationReport{}, nil},
		{"loaded", hoststore.CustomizationReport{Loaded: true}, &metav1.Condition{
			Status: metav1.ConditionTrue, Reason: configv1.ReasonLoaded, Message: "the scripts for example.io/v1 Widget loaded"}},
		{"refused", hoststore.CustomizationReport{Loaded: true, Refusal: errors.New(`resource interpreter customization "spin": replicaResource: replicaResource:1: budget exhausted`)}, &metav1.Condition{
			Status: metav1.ConditionFalse, Reason: configv1.ReasonRefused,
			Message: `example.io/v1 Widget is refused: resource interpreter customization "spin": replicaResource: replicaResource:1: budget exhausted`}},
		{"exceeded", hoststore.CustomizationReport{Loaded: true, Exceeded: exceeded}, &metav1.Condition{
			Status: metav1.ConditionFalse, Reason: configv1.ReasonBudgetExceeded,
			Message: `example.io/v1 Widget is refused until this customization changes: a call of its replicaResource script ran out of a budget: ` +
				`resource interpreter customization "spin": replicaResource: replicaResource:2: budget exhausted: more than 2000000 instructions`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := readyCondition(ric, c.report)
			if c.want == nil {
				if ok {
					t.Errorf("got %+v, want none", got)
				}
				return
			}
			c.want.Type, c.want.ObservedGeneration = configv1.ConditionReady, 3
			if diff := cmp.Diff(*c.want, got, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); !ok || diff != "" {
				t.Errorf("condition (-want +got, ok %v):\n%s", ok, diff)
			}
		})
	}
}
