package e2e_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestComponentsPlaceTheJobWhereItFits runs a multi-component Widget (a
// leader of 1 cpu and 2Gi and four workers of 2 cpu and 4Gi each: 9 cpu
// and 18Gi a set) in continuous mode over two members whose nodes the test
// writes: roomy has more cpu than the set needs but 16Gi of memory, fits
// has 10 cpu and 32Gi. The detector records the customization's components
// in the binding, the scheduler places the Widget on the one member where
// every component fits (a placement of one cluster, Aggregated), and the
// member gets it whole, its replicaRevision script not run.
func TestComponentsPlaceTheJobWhereItFits(t *testing.T) {
	t.Parallel()
	start := time.Now()
	f := controllertest.StartFleet(t, 2)
	roomy, fits := f.Names[0], f.Names[1]
	writeNode(t, f.Members[roomy], "big", "32", "16Gi", "110", nil, nil)
	writeNode(t, f.Members[fits], "right", "10", "32Gi", "110", nil, nil)
	testkit.MustCreate(t, f.Hub, controllertest.WidgetCRD(t))
	for _, n := range f.Names {
		testkit.MustCreate(t, f.Members[n], controllertest.WidgetCRD(t))
	}
	f.StartControlPlane(t)

	ric := &configv1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "widget-job"}}
	testkit.MustYAML(t, ric, `
spec:
  target: {apiVersion: example.com/v1, kind: Widget}
  customizations:
    componentResource:
      luaScript: |
        function GetComponents(obj)
          return {
            {name = "leader", replicas = 1, replicaRequirements = {resourceRequest = {cpu = "1", memory = "2Gi"}}},
            {name = "workers", replicas = obj.spec.workers, replicaRequirements = {resourceRequest = {cpu = "2", memory = "4Gi"}}},
          }
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, n)
          obj.spec.workers = n
          return obj
        end
`)
	testkit.MustCreate(t, f.Hub, ric)
	cpp := &policyv1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "jobs"}}
	testkit.MustYAML(t, cpp, `
spec:
  resourceSelectors: [{apiVersion: example.com/v1, kind: Widget}]
  placement:
    spreadConstraints: [{spreadByField: cluster, minGroups: 1, maxGroups: 1}]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
`)
	testkit.MustCreate(t, f.Hub, cpp)
	job := controllertest.Widget("job", "large")
	job.Object["spec"].(map[string]any)["workers"] = int64(4)
	testkit.Eventually(t, controllertest.Deadline, "host serves widgets", func() (bool, string) {
		err := f.Hub.Create(t.Context(), job)
		return err == nil, fmt.Sprint(err)
	})

	key := client.ObjectKey{Name: hoststore.BindingName(controllertest.WidgetGVK.GroupKind(), "job")}
	testkit.Eventually(t, controllertest.Deadline, "binding with two components scheduled to "+fits, func() (bool, string) {
		var crb workv1.ClusterResourceBinding
		if err := f.Hub.Get(t.Context(), key, &crb); err != nil {
			return false, err.Error()
		}
		s := crb.Spec
		ok := len(s.Components) == 2 && s.Components[1].Name == "workers" && s.Components[1].Replicas == 4 && s.Replicas == 0 &&
			len(s.Clusters) == 1 && s.Clusters[0] == api.TargetCluster{Name: fits}
		return ok, fmt.Sprintf("components %+v, clusters %+v, conditions %+v", s.Components, s.Clusters, crb.Status.Conditions)
	})
	got := controllertest.Widget("", "")
	controllertest.WaitObject(t, f.Members[fits], fits, got, "job")
	if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "workers"); n != 4 {
		t.Errorf("%s runs %d workers, want the template's 4 (placed whole)", fits, n)
	}
	controllertest.AbsentFor(t, f.Members[roomy], controllertest.Widget("", ""), client.ObjectKey{Name: "job"}, time.Second)
	t.Logf("TestComponentsPlaceTheJobWhereItFits: %v", time.Since(start).Round(10*time.Millisecond))
}
