package schedule

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
)

// TestTolerationRunsOut: a binding on a cluster whose NoExecute taint is
// tolerated for a while is scheduled again when the toleration runs out, as
// Karmada's taint manager queues it with the minimum toleration time.
func TestTolerationRunsOut(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	added := metav1.NewTime(t0.Add(-time.Minute))
	noExec := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	fleet := map[string]*api.Cluster{"a": sharedtest.Tainted("a", noExec), "b": sharedtest.Tainted("b")}
	tol := func(seconds *int64) []corev1.Toleration {
		return []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds}}
	}
	on := func(names ...string) []api.TargetCluster {
		out := make([]api.TargetCluster, len(names))
		for i, n := range names {
			out[i] = api.TargetCluster{Name: n, Replicas: 1}
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		scheduled   []api.TargetCluster
		tolerations []corev1.Toleration
		want        time.Duration
	}{
		{"300s toleration, 60s in", on("a", "b"), tol(ptr.To[int64](300)), 240 * time.Second},
		{"tolerated for good", on("a", "b"), tol(nil), 0},
		{"not scheduled to the tainted cluster", on("b"), tol(ptr.To[int64](300)), 0},
	} {
		if got := tolerationRunsOut(tc.scheduled, fleet, tc.tolerations, t0); got != tc.want {
			t.Errorf("%s: tolerationRunsOut = %v, want %v", tc.name, got, tc.want)
		}
	}
}
