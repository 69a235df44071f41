package work_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// victim is tenant-b's ConfigMap, propagated to cluster by tenant-b's own
// policy; it returns the key of its Work there once the member has it.
func victim(t *testing.T, e controllertest.Fleet, name, cluster string) client.ObjectKey {
	t.Helper()
	victimPolicyOnly(t, e, name, cluster)
	testkit.Eventually(t, controllertest.Deadline, "tenant-b's ConfigMap "+name+" in "+cluster, func() (bool, string) {
		err := e.Members[cluster].Get(t.Context(), client.ObjectKey{Namespace: "tenant-b", Name: name}, &corev1.ConfigMap{})
		return err == nil, fmt.Sprint(err)
	})
	return client.ObjectKey{Namespace: shared.ExecutionNamespace(cluster), Name: shared.WorkName(api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "tenant-b", Name: name})}
}

// TestTenantBindingsAreRefused: a tenant with rights in its own namespace
// writes ResourceBindings that name the control plane's credential Secret,
// another tenant's template, a cluster-scoped kind, and its own template
// with clusters of its choosing. Each is refused with a FullyApplied
// condition naming the field, no Work is written for any, nothing reaches
// a member, the victim's Work is not taken over, and deleting the
// attacker's binding leaves the victim's Work and member object alone.
func TestTenantBindingsAreRefused(t *testing.T) {
	t.Parallel()
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()
	controllertest.Namespaces(t, env.Hub, "tenant-a", "tenant-b")
	victimWork := victim(t, env, "victim", names[0])
	var before workv1.Work
	if err := hub.Get(ctx, victimWork, &before); err != nil {
		t.Fatal(err)
	}

	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "mine"}})
	evil := []api.TargetCluster{{Name: "evil"}, {Name: names[1]}}
	rb := func(name, apiVersion, kind, ns, res string, placement *api.Placement) *workv1.ResourceBinding {
		b := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: name}}
		b.Spec.Resource = api.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: res}
		b.Spec.Clusters, b.Spec.Placement = evil, placement
		b.Spec.ConflictResolution = api.ConflictOverwrite
		return b
	}
	anywhere := &api.Placement{ClusterAffinity: &api.ClusterAffinity{ClusterNames: []string{names[1]}}}
	cases := []struct {
		rb   *workv1.ResourceBinding
		want []string
	}{
		{rb(names[0]+"-secret", "v1", "Secret", shared.SystemNamespace, names[0], nil), []string{"ResourceBinding tenant-a/" + names[0] + "-secret", "spec.resource.namespace", "spec.placement"}},
		{rb("victim-configmap", "v1", "ConfigMap", "tenant-b", "victim", anywhere), []string{"spec.resource.namespace"}},
		{rb("admin-clusterrole.rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", "ClusterRole", "tenant-a", "admin", anywhere), []string{"spec.resource.kind"}},
		{rb("mine-configmap", "v1", "ConfigMap", "tenant-a", "mine", nil), []string{"spec.placement: Required"}},
	}
	for _, tc := range cases {
		testkit.MustCreate(t, hub, tc.rb)
	}
	// A placement of the tenant's own choosing, for a template no policy
	// claims, is refused as well.
	unclaimed := rb("unclaimed-configmap", "v1", "ConfigMap", "tenant-a", "unclaimed", anywhere)
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "unclaimed"}})
	testkit.MustCreate(t, hub, unclaimed)
	cases = append(cases, struct {
		rb   *workv1.ResourceBinding
		want []string
	}{unclaimed, []string{"no propagation policy claims the template"}})

	for _, tc := range cases {
		key := client.ObjectKeyFromObject(tc.rb)
		if tc.rb.Spec.Resource.Namespace == "tenant-a" && tc.rb.Spec.Resource.Kind == "ConfigMap" {
			// The detector owns the binding name of tenant-a's own
			// ConfigMaps: it deletes the binding of one no policy
			// claims. Either way, nothing is rendered.
			testkit.Eventually(t, controllertest.Deadline, "binding "+key.String()+" refused or deleted", func() (bool, string) {
				var rb workv1.ResourceBinding
				err := hub.Get(ctx, key, &rb)
				if apierrors.IsNotFound(err) {
					return true, ""
				}
				c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionFullyApplied)
				ok := c != nil && c.Reason == "Refused" && strings.Contains(c.Message, tc.want[0])
				return ok, fmt.Sprintf("%v, conditions %+v", err, rb.Status.Conditions)
			})
		} else {
			controllertest.WaitRefused(t, hub, key, tc.want...)
		}
		if ws := controllertest.WorksOf(t, hub, tc.rb.UID); len(ws) > 0 {
			t.Errorf("binding %s got Works: %v", tc.rb.Name, ws)
		}
	}
	controllertest.AbsentFor(t, env.Members[names[1]], &corev1.ConfigMap{}, client.ObjectKey{Namespace: "tenant-b", Name: "victim"}, 3*time.Second)
	for _, key := range []client.ObjectKey{{Namespace: shared.SystemNamespace, Name: names[0]}} {
		if err := env.Members[names[1]].Get(ctx, key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("member %s: Secret %s: %v, want NotFound", names[1], key, err)
		}
	}
	for _, key := range []client.ObjectKey{{Namespace: "tenant-a", Name: "mine"}, {Namespace: "tenant-a", Name: "unclaimed"}} {
		if err := env.Members[names[1]].Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Errorf("member %s: ConfigMap %s: %v, want NotFound", names[1], key, err)
		}
	}
	if err := hub.Get(ctx, client.ObjectKey{Name: shared.ExecutionNamespace("evil")}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("execution namespace of cluster evil: %v, want NotFound", err)
	}

	t.Log("the victim's Work was not taken over; deleting the attacker's binding leaves it and the member object")
	var after workv1.Work
	if err := hub.Get(ctx, victimWork, &after); err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID || after.Labels[shared.LabelBindingPermanentID] != before.Labels[shared.LabelBindingPermanentID] {
		t.Fatalf("victim's Work changed hands: permanent-id %s -> %s", before.Labels[shared.LabelBindingPermanentID], after.Labels[shared.LabelBindingPermanentID])
	}
	hijack := cases[1].rb
	if err := hub.Delete(ctx, hijack); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "attacker's binding gone", func() (bool, string) {
		err := hub.Get(ctx, client.ObjectKeyFromObject(hijack), &workv1.ResourceBinding{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		var w workv1.Work
		if err := hub.Get(ctx, victimWork, &w); err != nil || w.UID != before.UID || !w.DeletionTimestamp.IsZero() {
			t.Fatalf("victim's Work after the attacker's binding went: %v (deleting %v)", err, !w.DeletionTimestamp.IsZero())
		}
		if err := env.Members[names[0]].Get(ctx, client.ObjectKey{Namespace: "tenant-b", Name: "victim"}, &corev1.ConfigMap{}); err != nil {
			t.Fatalf("victim's member object: %v", err)
		}
	}
}

// TestForgedWorksAreNeverApplied: Works written by hand into execution
// namespaces, with labels and annotations computed from a real binding, are
// never applied to their member (the objects never appear), and deleting
// one never removes the binding's real member object. An execution
// namespace someone else made is refused, with the binding saying so.
func TestForgedWorksAreNeverApplied(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 3)
	// The namespace sync would create every execution namespace for
	// tenant-b; this test plants one of its own first.
	env.StartControlPlane(t, func(o *shared.Options) { o.DisableNamespaceSync = true })
	hub, names := env.Hub, env.Names
	ctx := t.Context()
	controllertest.Namespaces(t, env.Hub, "tenant-b")
	victim(t, env, "victim", names[0])
	var rb workv1.ResourceBinding
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "tenant-b", Name: "victim-configmap"}, &rb); err != nil {
		t.Fatal(err)
	}
	victimRef := api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "tenant-b", Name: "victim"}
	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"owner": "attacker"}}
	}
	// An execution namespace that looks like flotilla's, labels and all.
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.ExecutionNamespace(names[1]), Labels: map[string]string{shared.LabelExecutionSpace: names[1]}}})

	forged := []struct {
		work *workv1.Work
		want string
	}{
		// The binding's own template, to a cluster it is not scheduled to.
		{controllertest.ForgedWork(t, &rb, names[1], shared.WorkName(victimRef), cm("tenant-b", "victim")), "is not scheduled to cluster " + names[1]},
		// Another object in the binding's namespace, next to its real Work.
		{controllertest.ForgedWork(t, &rb, names[0], shared.WorkName(api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "tenant-b", Name: "planted"}), cm("tenant-b", "planted")), "is not the template of binding"},
		// The binding's template under another name: deleting it must not
		// remove the real object.
		{controllertest.ForgedWork(t, &rb, names[0], "decoy", cm("tenant-b", "victim")), `the Work of ConfigMap tenant-b/victim is named`},
		// A Work naming a binding that does not exist.
		{controllertest.ForgedWork(t, &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "x", UID: "123"}}, names[1], "evil", cm("kube-system", "evil")), "Not found"},
	}
	for _, f := range forged {
		testkit.MustCreate(t, hub, f.work)
	}
	// The first three carry the binding's permanent id: the binding
	// controller deletes them as Works of its own it does not want, if the
	// execution controller has not refused them first. The last names no
	// binding and stays refused.
	for _, f := range forged[:3] {
		key := client.ObjectKeyFromObject(f.work)
		testkit.Eventually(t, controllertest.Deadline, "forged Work "+key.String()+" refused or deleted", func() (bool, string) {
			var w workv1.Work
			err := hub.Get(ctx, key, &w)
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
			return c != nil && c.Reason == "Refused" && strings.Contains(c.Message, f.want), fmt.Sprintf("%v, conditions %+v", err, w.Status.Conditions)
		})
	}
	controllertest.WaitWorkRefused(t, hub, client.ObjectKeyFromObject(forged[3].work), forged[3].want)
	controllertest.AbsentFor(t, env.Members[names[1]], &corev1.ConfigMap{}, client.ObjectKey{Namespace: "tenant-b", Name: "victim"}, 2*time.Second)
	controllertest.AbsentFor(t, env.Members[names[0]], &corev1.ConfigMap{}, client.ObjectKey{Namespace: "tenant-b", Name: "planted"}, time.Second)
	controllertest.AbsentFor(t, env.Members[names[1]], &corev1.ConfigMap{}, client.ObjectKey{Namespace: "kube-system", Name: "evil"}, time.Second)
	var live corev1.ConfigMap
	if err := env.Members[names[0]].Get(ctx, client.ObjectKey{Namespace: "tenant-b", Name: "victim"}, &live); err != nil || live.Data["owner"] != "tenant-b" {
		t.Fatalf("victim's member object: %v %v, want tenant-b's", err, live.Data)
	}

	t.Log("the decoy Work's removal leaves the real member object")
	decoy := forged[2].work
	if err := hub.Delete(ctx, decoy); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "decoy Work gone", func() (bool, string) {
		err := hub.Get(ctx, client.ObjectKeyFromObject(decoy), &workv1.Work{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err := env.Members[names[0]].Get(ctx, client.ObjectKey{Namespace: "tenant-b", Name: "victim"}, &live); err != nil {
			t.Fatalf("victim's member object after the decoy Work went: %v", err)
		}
	}

	t.Log("an execution namespace flotilla did not create is refused")
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.ExecutionNamespace(names[2])}})
	victimPolicyOnly(t, env, "second", names[2])
	controllertest.WaitRefused(t, hub, client.ObjectKey{Namespace: "tenant-b", Name: "second-configmap"}, "Namespace "+shared.ExecutionNamespace(names[2]), "was not created by flotilla")
	controllertest.AbsentFor(t, env.Members[names[2]], &corev1.ConfigMap{}, client.ObjectKey{Namespace: "tenant-b", Name: "second"}, 2*time.Second)
}

// victimPolicyOnly is victim without waiting for the member.
func victimPolicyOnly(t *testing.T, e controllertest.Fleet, name, cluster string) {
	t.Helper()
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: name}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: %s}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, name, cluster)
	testkit.MustCreate(t, e.Hub, pp)
	testkit.MustCreate(t, e.Hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: name}, Data: map[string]string{"owner": "tenant-b"}})
}
