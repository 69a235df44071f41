package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

func TestPullStatus(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	lease := func(renewed time.Duration, seconds int32) *coordinationv1.Lease {
		at := metav1.NewMicroTime(t0.Add(-renewed))
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &at, LeaseDurationSeconds: ptr.To(seconds)}}
	}
	reported := api.ClusterStatus{KubernetesVersion: "v1.35.4", Conditions: []metav1.Condition{
		{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: api.ReasonClusterReady, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))},
	}}
	unknown := func(msg string) api.ClusterStatus {
		return api.ClusterStatus{KubernetesVersion: "v1.35.4", Conditions: []metav1.Condition{
			{Type: api.ClusterConditionReady, Status: metav1.ConditionUnknown, Reason: ReasonClusterStatusUnknown, Message: msg, LastTransitionTime: metav1.NewTime(t0)},
		}}
	}
	unknownEarlier := unknown("earlier")
	unknownEarlier.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(-time.Minute))
	tests := []struct {
		name     string
		current  api.ClusterStatus
		lease    *coordinationv1.Lease
		want     api.ClusterStatus
		wantLeft time.Duration
	}{
		{name: "a renewed lease keeps what the agent wrote", current: reported, lease: lease(10*time.Second, 40), want: reported, wantLeft: 30 * time.Second},
		{name: "an expired lease turns Ready Unknown and keeps the facts", current: reported, lease: lease(41*time.Second, 40),
			want: unknown("the agent of cluster edge stopped renewing lease flotilla-cluster/edge at 2024-12-31T23:59:19Z (duration 40s)")},
		{name: "no lease at all", current: api.ClusterStatus{}, want: api.ClusterStatus{Conditions: unknown("no agent has renewed lease flotilla-cluster/edge of cluster edge").Conditions}},
		{name: "a lease never renewed (register made it)", current: api.ClusterStatus{}, lease: &coordinationv1.Lease{},
			want: api.ClusterStatus{Conditions: unknown("no agent has renewed lease flotilla-cluster/edge of cluster edge").Conditions}},
		{name: "already Unknown: nothing is rewritten", current: unknownEarlier, lease: lease(time.Hour, 40), want: unknownEarlier},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, left := pullStatus("edge", tt.current, tt.lease, t0)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if left != tt.wantLeft {
				t.Errorf("time left = %v, want %v", left, tt.wantLeft)
			}
		})
	}
}

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
		{name: "verified with Overwrite", work: work(3, map[string]string{AnnotationVerifiedGeneration: "3", AnnotationConflictResolution: "Overwrite"}), want: api.ConflictOverwrite},
		{name: "an unknown resolution is Abort", work: work(3, map[string]string{AnnotationVerifiedGeneration: "3", AnnotationConflictResolution: "Adopt"}), want: api.ConflictAbort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := verifiedByHub(tt.work)
			if tt.pending {
				if !errors.Is(err, errPending) {
					t.Fatalf("got %v, %v; want errPending", got, err)
				}
				return
			}
			if err != nil || got.conflict != tt.want {
				t.Fatalf("got %+v, %v; want conflict %s", got, err, tt.want)
			}
		})
	}
}

func TestAgentTrigger(t *testing.T) {
	base := &workv1.Work{}
	base.Generation, base.Finalizers = 1, []string{FinalizerExecution}
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
