package work

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared/worktest"
)

func TestExecutionTrigger(t *testing.T) {
	base := worktest.Stored(worktest.Work("a", `{}`, func(w *workv1.Work) { w.Generation = 1 }))
	with := func(f func(*workv1.Work)) *workv1.Work {
		w := base.DeepCopy()
		f(w)
		return w
	}
	available := func(reason string) func(*workv1.Work) {
		return func(w *workv1.Work) {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: api.ConditionWorkAvailable, Status: metav1.ConditionFalse, Reason: reason})
		}
	}
	tests := []struct {
		name     string
		old, new *workv1.Work
		want     bool
	}{
		{"nothing changed", base, base, false},
		{"new spec", base, with(func(w *workv1.Work) { w.Generation = 2 }), true},
		{"deleted", base, with(worktest.Deleting), true},
		{"finalizer missing", base, with(func(w *workv1.Work) { w.Finalizers = nil }), true},
		{"member status changed", base, with(func(w *workv1.Work) { w.Status.ManifestStatuses = []api.ManifestStatus{{Health: api.ResourceHealthy}} }), false},
		{"object found missing", base, with(available(api.ReasonWorkNotFound)), true},
		{"object still missing", with(available(api.ReasonWorkNotFound)), with(available(api.ReasonWorkNotFound)), false},
		{"member unreachable", base, with(available(api.ReasonWorkObserveFailed)), false},
	}
	for _, tt := range tests {
		if got := executionTrigger(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: executionTrigger = %v, want %v", tt.name, got, tt.want)
		}
	}
}
