package crossplane_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// checkAutoscalersManaged drives FederatedHPA and CronFederatedHPA
// managed resources in namespace team (which exists) against the env's
// host and running control plane: each becomes the host's
// autoscaling.flotilla.io object with spec.forProvider as its spec; the
// FederatedHPA's status as the control plane writes it (here: no
// Deployment team/web to scale) comes back in status.atProvider, and the
// CronFederatedHPA's rule history likewise; a FederatedHPA whose
// maxReplicas is below its minReplicas is refused naming
// spec.forProvider.maxReplicas and never reaches the host; deleting the
// managed resources deletes the host objects.
func checkAutoscalersManaged(t *testing.T, e env) {
	t.Helper()
	ctx := t.Context()
	start := time.Now()
	defer func() {
		t.Logf("the autoscalers' managed resources took %s", time.Since(start).Round(10*time.Millisecond))
	}()
	hpa := &v1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}}
	testkit.MustYAML(t, hpa, `
spec:
  forProvider:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 3
`)
	testkit.MustCreate(t, e.mgmt, hpa)
	bad := &v1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bad"}}
	testkit.MustYAML(t, bad, `
spec:
  forProvider:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 5
    maxReplicas: 2
`)
	testkit.MustCreate(t, e.mgmt, bad)
	cron := &v1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly"}}
	testkit.MustYAML(t, cron, `
spec:
  forProvider:
    scaleTargetRef: {apiVersion: autoscaling.flotilla.io/v1alpha1, kind: FederatedHPA, name: web}
    rules:
    - {name: night, schedule: "0 22 * * *", targetMinReplicas: 1, targetMaxReplicas: 2}
`)
	testkit.MustCreate(t, e.mgmt, cron)

	poll(t, "the host FederatedHPA's status in atProvider", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, hpa, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		for _, hc := range hpa.Status.AtProvider.Conditions {
			if hc.Type == autoscalingv2.AbleToScale && hc.Status == corev1.ConditionFalse && strings.Contains(hc.Message, "Deployment team/web") {
				return c.Status == corev1.ConditionTrue, fmt.Sprintf("Ready %s", c.Status)
			}
		}
		return false, fmt.Sprintf("atProvider %+v", hpa.Status.AtProvider)
	})
	var live autoscalingv1.FederatedHPA
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, &live); err != nil || live.Spec.MaxReplicas != 3 || live.Spec.ScaleTargetRef.Name != "web" {
		t.Errorf("host FederatedHPA team/web: %v, spec %+v", err, live.Spec)
	}
	poll(t, "bad Synced=False naming spec.forProvider.maxReplicas", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, bad, xpv2.TypeSynced)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.forProvider.maxReplicas: Invalid value: 2: must be at least minReplicas (5)"), c.Message
	})
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "team", Name: "bad"}, &live); !apierrors.IsNotFound(err) {
		t.Errorf("the invalid FederatedHPA reached the host: %v", err)
	}
	poll(t, "the host CronFederatedHPA's rule history in atProvider", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, cron, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		h := cron.Status.AtProvider.ExecutionHistories
		return c.Status == corev1.ConditionTrue && len(h) == 1 && h[0].RuleName == "night" && h[0].NextExecutionTime != nil,
			fmt.Sprintf("Ready %s, atProvider %+v", c.Status, cron.Status.AtProvider)
	})

	t.Log("deleting the managed resources deletes the host autoscalers")
	for _, mg := range []client.Object{hpa, bad, cron} {
		if err := e.mgmt.Delete(ctx, mg); err != nil {
			t.Fatal(err)
		}
	}
	gone(t, e.mgmt, &autoscalingv1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}})
	// The managed resources' own removal (the finalizer, after one more
	// Observe at the reconciler's backoff) is crossplane-runtime's, tested
	// with the other kinds; waiting for it here would cost ~30 s.
	gone(t, e.mgmt, &autoscalingv1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly"}})
}
