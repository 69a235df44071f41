package detector_test

import (
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestDetectorOfDeletedCRD runs the control plane against a real host and
// members: a cluster-scoped CRD installed after start and an instance of it
// are propagated; deleting the CRD on the host stops the kind's detector
// (metric flotilla_template_kind_detector 0) and removes every event
// handler it held on the host's informers (flotilla_template_kind_watches
// 0), and the instance's binding goes; installing the CRD again starts a
// detector with the same number of watches as the first (none leaked), and
// a new instance is propagated.
func TestDetectorOfDeletedCRD(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	cpp := &policyv1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "widgets"}}
	testkit.MustYAML(t, cpp, `
spec:
  resourceSelectors:
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: widgets.example.com}
  - {apiVersion: example.com/v1, kind: Widget}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, names[0])
	testkit.MustCreate(t, hub, cpp)
	if got := detectorMetric(t, "flotilla_template_kind_detector"); got != 0 {
		t.Fatalf("Widget detector before its CRD = %v, want 0", got)
	}

	install := func(name string) {
		t.Helper()
		testkit.MustCreate(t, hub, controllertest.WidgetCRD(t))
		testkit.Eventually(t, controllertest.Deadline, "host serves widgets", func() (bool, string) {
			err := hub.Create(ctx, controllertest.Widget(name, "large"))
			return err == nil, fmt.Sprint(err)
		})
		controllertest.WaitObject(t, members[names[0]], names[0], controllertest.Widget("", ""), name)
		testkit.Eventually(t, controllertest.Deadline, "Widget detector running", func() (bool, string) {
			running, watches := detectorMetric(t, "flotilla_template_kind_detector"), detectorMetric(t, "flotilla_template_kind_watches")
			return running == 1 && watches > 0, fmt.Sprintf("detector %v, watches %v", running, watches)
		})
	}

	t.Log("install the CRD after start: the instance is propagated and the detector runs")
	install("blue")
	first := detectorMetric(t, "flotilla_template_kind_watches")

	t.Log("delete the CRD on the host: the detector stops and lets go of its watches")
	if err := hub.Delete(ctx, controllertest.WidgetCRD(t)); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitGone(t, hub, &apiextensionsv1.CustomResourceDefinition{}, "widgets.example.com")
	testkit.Eventually(t, controllertest.Deadline, "Widget detector stopped", func() (bool, string) {
		running, watches := detectorMetric(t, "flotilla_template_kind_detector"), detectorMetric(t, "flotilla_template_kind_watches")
		return running == 0 && watches == 0, fmt.Sprintf("detector %v, watches %v", running, watches)
	})
	controllertest.WaitGone(t, hub, &workv1.ClusterResourceBinding{}, "blue-widget.example.com")

	t.Log("install the CRD again: a new detector, as many watches as before, and propagation works")
	install("green")
	if again := detectorMetric(t, "flotilla_template_kind_watches"); again != first {
		t.Errorf("Widget detector holds %v watches after the CRD came back, %v the first time: handlers leaked or missing", again, first)
	}
	controllertest.WaitObject(t, hub, "host", &workv1.ClusterResourceBinding{}, "green-widget.example.com")
}

// detectorMetric reads a gauge of the Widget kind's detector from the
// control plane's metrics registry (the manager runs in the test process).
func detectorMetric(t *testing.T, name string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["group"] == "example.com" && labels["kind"] == "Widget" {
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}
