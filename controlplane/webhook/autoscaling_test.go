package webhook_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestWebhookValidatesAutoscalers: the host refuses a FederatedHPA with
// min > max and a CronFederatedHPA with a bad time zone, naming the field,
// through the installed webhook; valid ones are stored.
func TestWebhookValidatesAutoscalers(t *testing.T) {
	hub := startHost(t)
	ctx := t.Context()
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})

	fhpa := &autoscalingv1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	testkit.MustYAML(t, fhpa, `
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: 3
`)
	err := hub.Create(ctx, fhpa)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.maxReplicas: Invalid value: 3: must be at least minReplicas (5)") {
		t.Fatalf("min over max: %v, want Invalid naming spec.maxReplicas", err)
	}
	fhpa.Spec.MaxReplicas = 10
	testkit.MustCreate(t, hub, fhpa)

	cron := &autoscalingv1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	testkit.MustYAML(t, cron, `
spec:
  scaleTargetRef: {apiVersion: autoscaling.flotilla.io/v1alpha1, kind: FederatedHPA, name: web}
  rules:
  - {name: peak, schedule: "0 8 * * *", timeZone: Mars/Olympus, targetMaxReplicas: 20}
`)
	err = hub.Create(ctx, cron)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.rules[0].timeZone: Invalid value: "Mars/Olympus": unknown time zone`) {
		t.Fatalf("bad time zone: %v, want Invalid naming spec.rules[0].timeZone", err)
	}
	tz := "Europe/Paris"
	cron.Spec.Rules[0].TimeZone = &tz
	testkit.MustCreate(t, hub, cron)
}
