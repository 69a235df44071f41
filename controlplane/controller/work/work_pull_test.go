package work

import (
	"errors"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

func TestVerifiedByHub(t *testing.T) {
	work := func(gen int64, annotations map[string]string) *workv1.Work {
		w := &workv1.Work{}
		w.Generation, w.Annotations = gen, annotations
		return w
	}
	tests := []struct {
		name    string
		work    *workv1.Work
		want    api.ConflictResolution
		pending bool
	}{
		{name: "never verified", work: work(1, nil), pending: true},
		{name: "an older generation verified", work: work(2, map[string]string{AnnotationVerifiedGeneration: "1"}), pending: true},
		{name: "verified, Abort by default", work: work(2, map[string]string{AnnotationVerifiedGeneration: "2"}), want: api.ConflictAbort},
		{name: "verified with Overwrite", work: work(3, map[string]string{AnnotationVerifiedGeneration: "3", shared.AnnotationConflictResolution: "Overwrite"}), want: api.ConflictOverwrite},
		{name: "an unknown resolution is Abort", work: work(3, map[string]string{AnnotationVerifiedGeneration: "3", shared.AnnotationConflictResolution: "Adopt"}), want: api.ConflictAbort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := verifiedByHub(tt.work)
			if tt.pending {
				if !errors.Is(err, shared.ErrPending) {
					t.Fatalf("got %v, %v; want errPending", got, err)
				}
				return
			}
			if err != nil || got.Conflict != tt.want {
				t.Fatalf("got %+v, %v; want conflict %s", got, err, tt.want)
			}
		})
	}
}

func TestAgentTrigger(t *testing.T) {
	base := &workv1.Work{}
	base.Generation, base.Finalizers = 1, []string{shared.FinalizerExecution}
	stamped := base.DeepCopy()
	stamped.Annotations = map[string]string{AnnotationVerifiedGeneration: "1"}
	if executionTrigger(base, stamped) {
		t.Error("the control plane's execution controller acts on its own verification stamp; want it left to the agent")
	}
	if !agentTrigger(base, stamped) {
		t.Error("the agent ignores the control plane's verification; want it to apply the Work at once")
	}
	if agentTrigger(stamped, stamped.DeepCopy()) {
		t.Error("the agent acts on an update that changes nothing it reads")
	}
}
