package controllertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// HealthOf is the health a binding reports for cluster.
func HealthOf(rb *workv1.ResourceBinding, cluster string) api.ResourceHealth {
	for _, it := range rb.Status.AggregatedStatus {
		if it.ClusterName == cluster {
			return it.Health
		}
	}
	return ""
}

// WorksOf lists the Works labelled with the binding's UID.
func WorksOf(t testing.TB, hub client.Client, uid types.UID) []workv1.Work {
	t.Helper()
	var list workv1.WorkList
	if err := hub.List(t.Context(), &list, client.MatchingLabels{shared.LabelBindingPermanentID: string(uid)}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// WaitRefused waits until the binding's FullyApplied condition refuses it
// with a message containing each of want.
func WaitRefused(t testing.TB, hub client.Client, key client.ObjectKey, want ...string) *workv1.ResourceBinding {
	t.Helper()
	var rb workv1.ResourceBinding
	testkit.Eventually(t, Deadline, "binding "+key.String()+" refused", func() (bool, string) {
		if err := hub.Get(t.Context(), key, &rb); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionFullyApplied)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Refused" {
			return false, fmt.Sprintf("conditions %+v", rb.Status.Conditions)
		}
		for _, w := range want {
			if !strings.Contains(c.Message, w) {
				return false, fmt.Sprintf("message %q lacks %q", c.Message, w)
			}
		}
		return true, ""
	})
	return &rb
}

// ForgedWork is a Work written by hand with the labels and annotations the
// binding controller would compute for rb: what someone with write access
// to an execution namespace could write.
func ForgedWork(t testing.TB, rb *workv1.ResourceBinding, cluster, name string, obj client.Object) *workv1.Work {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	w := &workv1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace:   shared.ExecutionNamespace(cluster),
		Name:        name,
		Labels:      map[string]string{shared.LabelBindingPermanentID: string(rb.UID)},
		Annotations: map[string]string{shared.AnnotationBindingNamespace: rb.Namespace, shared.AnnotationBindingName: rb.Name, shared.AnnotationConflictResolution: "Overwrite"},
	}}
	w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	return w
}

// WaitWorkRefused waits until the execution controller refuses a Work with
// a message containing want.
func WaitWorkRefused(t testing.TB, hub client.Client, key client.ObjectKey, want string) {
	t.Helper()
	testkit.Eventually(t, Deadline, "work "+key.String()+" refused", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(t.Context(), key, &w); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
		ok := c != nil && c.Status == metav1.ConditionFalse && c.Reason == "Refused" && strings.Contains(c.Message, want)
		return ok, fmt.Sprintf("conditions %+v", w.Status.Conditions)
	})
}
