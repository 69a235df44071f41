package binding_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestHPARetainsMemberReplicas runs Karmada's HPA scale-target marker and
// retain-replicas rule against a real host and real members: a Deployment
// divided 2/2 over two members, with a propagated HPA targeting it, is
// rendered with the retain-replicas label; replicas the member changes
// through the scale subresource (as its HPA does) survive several resyncs;
// a member whose replicas nobody changed keeps flotilla's share (the
// ownership handover, without which server-side apply would reset it to
// 1); an image change still rolls out without touching replicas; deleting
// the HPA gives replicas back to flotilla's division.
func TestHPARetainsMemberReplicas(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()
	scaled, idle := env.Members[names[0]], env.Members[names[1]]

	controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(names[:2]...).Divided(api.ReplicaDivisionPreferenceWeighted).SelectName("autoscaling/v2", "HorizontalPodAutoscaler", "web"))
	testkit.MustCreate(t, hub, controllertest.Deployment(4))
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 10,
		},
	}
	testkit.MustCreate(t, hub, hpa)

	t.Log("the scale target is rendered with the retain-replicas label, replicas divided 2/2")
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[0]: 2, names[1]: 2, names[2]: -1})
	testkit.Eventually(t, controllertest.Deadline, "retain-replicas label on both members", func() (bool, string) {
		for _, name := range names[:2] {
			var d appsv1.Deployment
			if err := env.Members[name].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
				return false, err.Error()
			}
			if d.Labels[interpret.RetainReplicasLabel] != "true" {
				return false, fmt.Sprintf("%s labels %v", name, d.Labels)
			}
		}
		return true, ""
	})
	var tmpl appsv1.Deployment
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &tmpl); err != nil {
		t.Fatal(err)
	}
	if _, ok := tmpl.Labels[interpret.RetainReplicasLabel]; ok {
		t.Errorf("the template on the host was labelled %v; flotilla marks the rendered copy only", tmpl.Labels)
	}

	t.Log("the member scales its Deployment to 5 through the scale subresource, as an HPA does")
	var d appsv1.Deployment
	if err := scaled.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	if err := scaled.SubResource("scale").Update(ctx, &d, client.WithSubResourceBody(scale), client.FieldOwner("horizontal-pod-autoscaler")); err != nil {
		t.Fatal(err)
	}
	holdReplicas(t, env, map[string]int32{names[0]: 5, names[1]: 2}, 6*time.Second)
	if err := idle.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	if !managedBy(&d, execution.RetainedFieldManager) {
		t.Errorf("the idle member's spec.replicas was not handed over to %s: managed fields %v", execution.RetainedFieldManager, managers(&d))
	}

	t.Log("an image change rolls out and leaves the member's replicas alone")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(&tmpl), &tmpl, func() {
		tmpl.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	})
	testkit.Eventually(t, controllertest.Deadline, "new image on both members", func() (bool, string) {
		for _, name := range names[:2] {
			var d appsv1.Deployment
			if err := env.Members[name].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
				return false, err.Error()
			}
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
				return false, name + " image " + img
			}
		}
		return true, ""
	})
	holdReplicas(t, env, map[string]int32{names[0]: 5, names[1]: 2}, 3*time.Second)

	t.Log("deleting the HPA gives replicas back to flotilla's division")
	if err := hub.Delete(ctx, hpa); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[0]: 2, names[1]: 2, names[2]: -1})
	testkit.Eventually(t, controllertest.Deadline, "retain-replicas label gone", func() (bool, string) {
		if err := scaled.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		_, ok := d.Labels[interpret.RetainReplicasLabel]
		return !ok, fmt.Sprintf("labels %v", d.Labels)
	})
}

// holdReplicas checks, every 200 ms for the whole period (several resyncs
// of one second), that the members' Deployments keep the given replicas.
func holdReplicas(t *testing.T, env controllertest.Fleet, want map[string]int32, period time.Duration) {
	t.Helper()
	end := time.Now().Add(period)
	for time.Now().Before(end) {
		for name, n := range want {
			var d appsv1.Deployment
			if err := env.Members[name].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(d.Spec.Replicas, 1); got != n {
				t.Fatalf("member %s: replicas %d, want %d kept through the resyncs", name, got, n)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// managedBy reports whether manager has a managedFields entry on obj.
func managedBy(obj client.Object, manager string) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager {
			return true
		}
	}
	return false
}

func managers(obj client.Object) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		out = append(out, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
	}
	return out
}
