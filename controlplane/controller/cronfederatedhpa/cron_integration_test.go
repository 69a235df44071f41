package cronfederatedhpa_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestCronScalesTemplate runs the control plane on a real host and two
// real members, with the CronFederatedHPA controller on a fake clock: a
// rule "every minute" scales Deployment web's template to 6 when the clock
// reaches the minute, and the scheduler divides the 6 between the members
// (3 each); the successful history is trimmed to its limit of 2; a rule
// with a bad time zone is one failed execution naming it (no webhook runs
// here, as when one is bypassed); a suspended rule has no next time and
// scales nothing when its minute passes. A second CronFederatedHPA,
// written for Karmada's group, sets a FederatedHPA's bounds at 10:01.
func TestCronScalesTemplate(t *testing.T) {
	start := time.Now()
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 28, 10, 0, 30, 0, time.UTC))
	f := controllertest.StartFleet(t, 2)
	hub, ctx := f.Hub, t.Context()
	east, west := f.Names[0], f.Names[1]
	f.StartControlPlane(t, func(o *shared.Options) { o.CronClock = clock })

	controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(east, west).Divided(api.ReplicaDivisionPreferenceWeighted).Weight(1, east).Weight(1, west))
	testkit.MustCreate(t, hub, controllertest.Deployment(2))
	controllertest.WaitReplicas(t, f.Members, map[string]int32{east: 1, west: 1})

	cron := &autoscalingv1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, cron, `
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  rules:
  - {name: up, schedule: "* * * * *", targetReplicas: 6, successfulHistoryLimit: 2}
  - {name: mars, schedule: "0 8 * * *", timeZone: Mars/Olympus, targetReplicas: 1}
`)
	testkit.MustCreate(t, hub, cron)
	fhpa := &autoscalingv1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, fhpa, `
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 10
`)
	testkit.MustCreate(t, hub, fhpa)
	bounds := &autoscalingv1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bounds"}}
	testkit.MustYAML(t, bounds, `
spec:
  scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: web}
  rules:
  - {name: peak, schedule: "1 10 * * *", targetMinReplicas: 4, targetMaxReplicas: 8}
`)
	testkit.MustCreate(t, hub, bounds)
	history := func(rule string) api.ExecutionHistory {
		var got autoscalingv1.CronFederatedHPA
		if err := hub.Get(ctx, client.ObjectKeyFromObject(cron), &got); err != nil {
			t.Fatal(err)
		}
		for _, h := range got.Status.ExecutionHistories {
			if h.RuleName == rule {
				return h
			}
		}
		return api.ExecutionHistory{}
	}
	waitNext := func(rule, want string) {
		t.Helper()
		testkit.Eventually(t, controllertest.Deadline, "rule "+rule+" next at "+want, func() (bool, string) {
			h := history(rule)
			if want == "" {
				return h.RuleName != "" && h.NextExecutionTime == nil, fmt.Sprintf("%+v", h)
			}
			return h.NextExecutionTime != nil && h.NextExecutionTime.UTC().Format("15:04") == want, fmt.Sprintf("%+v", h)
		})
	}

	t.Log("a rule is scheduled, not run, when created; a bad time zone is a failed execution")
	waitNext("up", "10:01")
	waitNext("mars", "")
	if h := history("mars"); len(h.FailedExecutions) != 1 || !strings.Contains(h.FailedExecutions[0].Message, `unknown time zone "Mars/Olympus"`) {
		t.Fatalf("rule mars: %+v, want one failed execution naming the time zone", h)
	}
	if h := history("up"); len(h.SuccessfulExecutions) != 0 {
		t.Fatalf("rule up ran before its time: %+v", h)
	}

	t.Log("at 10:01 the template is scaled to 6 and the scheduler divides them")
	clock.SetTime(time.Date(2026, 11, 28, 10, 1, 0, 0, time.UTC))
	controllertest.WaitReplicas(t, f.Members, map[string]int32{east: 3, west: 3})
	waitNext("up", "10:02")
	if h := history("up"); len(h.SuccessfulExecutions) != 1 || ptr.Deref(h.SuccessfulExecutions[0].AppliedReplicas, 0) != 6 ||
		h.SuccessfulExecutions[0].ScheduleTime.UTC().Format("15:04") != "10:01" {
		t.Fatalf("rule up: %+v, want one success at 10:01 with 6 replicas", h)
	}
	testkit.Eventually(t, controllertest.Deadline, "FederatedHPA bounds 4..8", func() (bool, string) {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(fhpa), fhpa); err != nil {
			return false, err.Error()
		}
		return ptr.Deref(fhpa.Spec.MinReplicas, 0) == 4 && fhpa.Spec.MaxReplicas == 8, fmt.Sprintf("spec %+v", fhpa.Spec)
	})
	if fhpa.Spec.ScaleTargetRef.Name != "web" {
		t.Fatalf("the rule wrote more than the bounds: %+v", fhpa.Spec)
	}
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: api.KindCronFederatedHPA, Name: "web", Reason: "ScaleSucceeded", Type: "Normal", Note: "rule up: Deployment default/web scaled to 6 replicas"},
		{Kind: api.KindCronFederatedHPA, Name: "web", Reason: "StartRuleFailed", Type: "Warning", Note: "Mars/Olympus"},
	})

	t.Log("two more minutes: the history keeps the newest two")
	for _, minute := range []int{2, 3} {
		clock.SetTime(time.Date(2026, 11, 28, 10, minute, 0, 0, time.UTC))
		waitNext("up", fmt.Sprintf("10:%02d", minute+1))
	}
	if h := history("up"); len(h.SuccessfulExecutions) != 2 || h.SuccessfulExecutions[0].ScheduleTime.UTC().Format("15:04") != "10:03" ||
		h.SuccessfulExecutions[1].ScheduleTime.UTC().Format("15:04") != "10:02" {
		t.Fatalf("rule up: %+v, want the successes of 10:03 and 10:02", h)
	}
	if h := history("mars"); len(h.FailedExecutions) != 1 {
		t.Fatalf("rule mars recorded its failure again: %+v", h)
	}

	t.Log("suspended, the rule has no next time and its minute passes without scaling")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(cron), cron, func() { cron.Spec.Rules[0].Suspend = ptr.To(true) })
	waitNext("up", "")
	var d appsv1.Deployment
	testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "default", Name: "web"}, &d, func() { d.Spec.Replicas = ptr.To[int32](2) })
	controllertest.WaitReplicas(t, f.Members, map[string]int32{east: 1, west: 1})
	clock.SetTime(time.Date(2026, 11, 28, 10, 6, 0, 0, time.UTC))
	time.Sleep(2 * time.Second)
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(d.Spec.Replicas, 0); got != 2 {
		t.Fatalf("a suspended rule scaled the template to %d", got)
	}
	if h := history("up"); len(h.SuccessfulExecutions) != 2 || h.SuccessfulExecutions[0].ScheduleTime.UTC().Format("15:04") != "10:03" {
		t.Fatalf("a suspended rule ran: %+v", h)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}
