package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// checkFederatedHPANamesPull: a FederatedHPA over the web Deployment,
// placed on the Push and the Pull member, names the Pull member in its
// ScalingActive condition as a pull-mode member whose pods are not
// measured (the control plane never reaches it), and the Push member
// for its own reason (it serves no metrics.k8s.io). Its bounds are the
// template's replicas, so it never scales what the rest of the test
// moves; it is deleted before the test goes on.
func checkFederatedHPANamesPull(t *testing.T, e pullEnv) {
	t.Helper()
	fhpa := &autoscalingv1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, fhpa, `
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 4
  maxReplicas: 4
`)
	start := time.Now()
	testkit.MustCreate(t, e.hub, fhpa)
	want := []string{
		e.pull + ": pull-mode member: its pods are not measured",
		e.push + ": ",
	}
	testkit.Eventually(t, controllertest.Deadline, "the FederatedHPA names the Pull member as not measured", func() (bool, string) {
		if err := e.hub.Get(t.Context(), client.ObjectKeyFromObject(fhpa), fhpa); err != nil {
			return false, err.Error()
		}
		var msg string
		for _, c := range fhpa.Status.Conditions {
			if c.Type == autoscalingv2.ScalingActive {
				msg = c.Message
			}
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				return false, fmt.Sprintf("ScalingActive %q does not say %q", msg, w)
			}
		}
		return true, ""
	})
	t.Logf("the FederatedHPA named the Pull member after %s", time.Since(start).Round(10*time.Millisecond))
	if err := e.hub.Delete(t.Context(), fhpa); err != nil {
		t.Fatal(err)
	}
}
