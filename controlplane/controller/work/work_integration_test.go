package work_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestWorksCarryTheRenderedManifests follows the binding → works →
// execution → work status → binding status pipeline on a real host and
// three real members: one Work per scheduled cluster in flotilla-es-<cluster>
// holds that cluster's rendered object (its replica share and its override);
// a Work deleted by hand is created again and its member object restored;
// a cluster the binding leaves loses its Work and its object.
func TestWorksCarryTheRenderedManifests(t *testing.T) {
	t.Parallel()
	env := controllertest.StartRunning(t, 3)
	hub, memberClients, names := env.Hub, env.Members, env.Names
	ctx := t.Context()

	pp := controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(names...).Divided(api.ReplicaDivisionPreferenceWeighted))
	op := &policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "registry"}}
	testkit.MustYAML(t, op, `
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  overrideRules:
  - targetCluster:
      clusterNames: [%s]
    overriders:
      imageOverrider:
      - component: Registry
        operator: replace
        value: registry.eu.example.com
`, names[1])
	testkit.MustCreate(t, hub, op)
	testkit.MustCreate(t, hub, controllertest.Deployment(6))
	controllertest.WaitReplicas(t, memberClients, map[string]int32{names[0]: 2, names[1]: 2, names[2]: 2})

	name := shared.WorkName(api.TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"})
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}
	var rb workv1.ResourceBinding
	if err := hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}

	t.Log("one Work per cluster in its execution namespace, with the rendered object")
	for _, n := range names {
		image := "nginx"
		if n == names[1] {
			image = "registry.eu.example.com/nginx"
		}
		var w workv1.Work
		testkit.Eventually(t, controllertest.Deadline, "work of "+n+" applied and available", func() (bool, string) {
			if err := hub.Get(ctx, client.ObjectKey{Namespace: shared.ExecutionNamespace(n), Name: name}, &w); err != nil {
				return false, err.Error()
			}
			return apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkApplied) &&
					apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkAvailable) && len(w.Status.ManifestStatuses) == 1,
				fmt.Sprintf("conditions %+v, manifest statuses %d", w.Status.Conditions, len(w.Status.ManifestStatuses))
		})
		if got := w.Labels[shared.LabelBindingPermanentID]; got != string(rb.UID) {
			t.Errorf("work %s/%s permanent-id = %q, want the binding's UID %q", w.Namespace, w.Name, got, rb.UID)
		}
		if w.Annotations[shared.AnnotationBindingNamespace] != rbKey.Namespace || w.Annotations[shared.AnnotationBindingName] != rbKey.Name {
			t.Errorf("work %s/%s annotations %v do not name binding %s", w.Namespace, w.Name, w.Annotations, rbKey)
		}
		if len(w.Spec.Workload.Manifests) != 1 {
			t.Fatalf("work %s/%s has %d manifests, want 1", w.Namespace, w.Name, len(w.Spec.Workload.Manifests))
		}
		var d appsv1.Deployment
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &d); err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(d.Spec.Replicas, 0) != 2 || d.Spec.Template.Spec.Containers[0].Image != image || d.Labels[render.LabelFleet] != "test" {
			t.Errorf("work %s/%s manifest: replicas %v, image %q, labels %v; want 2, %q and fleet test",
				w.Namespace, w.Name, d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.Labels, image)
		}
		id := w.Status.ManifestStatuses[0].Identifier
		if id.Kind != "Deployment" || id.Resource != "deployments" || id.Name != "web" || id.Namespace != "default" {
			t.Errorf("work %s/%s manifest status identifier = %+v", w.Namespace, w.Name, id)
		}
	}

	t.Log("members report ready replicas: the Works carry them, the binding and the template aggregate them")
	for _, n := range names {
		controllertest.SetReady(t, memberClients[n], 2)
	}
	testkit.Eventually(t, controllertest.Deadline, "template status readyReplicas=6, observedGeneration=generation", func() (bool, string) {
		var d appsv1.Deployment
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 6 && d.Status.ObservedGeneration == d.Generation, fmt.Sprintf("generation %d, status %+v", d.Generation, d.Status)
	})
	if err := hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	for _, it := range rb.Status.AggregatedStatus {
		var st map[string]any
		if it.Status != nil {
			if err := json.Unmarshal(it.Status.Raw, &st); err != nil {
				t.Fatal(err)
			}
		}
		if !it.Applied || it.Health != "Healthy" || st["readyReplicas"] != float64(2) || st["generation"] != nil {
			t.Errorf("aggregated status of %s = applied %v, health %s, status %v; want applied, Healthy, readyReplicas 2 and no member generation", it.ClusterName, it.Applied, it.Health, st)
		}
	}

	t.Log("a second pass over unchanged objects writes nothing")
	before := map[string]string{}
	for _, n := range names {
		var w workv1.Work
		if err := hub.Get(ctx, client.ObjectKey{Namespace: shared.ExecutionNamespace(n), Name: name}, &w); err != nil {
			t.Fatal(err)
		}
		before[n] = w.ResourceVersion
	}
	if err := hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	rbVersion := rb.ResourceVersion
	var tmpl appsv1.Deployment
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &tmpl); err != nil {
		t.Fatal(err)
	}
	tmplVersion := tmpl.ResourceVersion
	// Three resyncs of every controller (Resync is 1s).
	time.Sleep(3 * time.Second)
	for _, n := range names {
		var w workv1.Work
		if err := hub.Get(ctx, client.ObjectKey{Namespace: shared.ExecutionNamespace(n), Name: name}, &w); err != nil {
			t.Fatal(err)
		}
		if w.ResourceVersion != before[n] {
			t.Errorf("work of %s written while nothing changed: resourceVersion %s → %s", n, before[n], w.ResourceVersion)
		}
	}
	if err := hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	if rb.ResourceVersion != rbVersion {
		t.Errorf("binding written while nothing changed: resourceVersion %s → %s", rbVersion, rb.ResourceVersion)
	}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &tmpl); err != nil {
		t.Fatal(err)
	}
	if tmpl.ResourceVersion != tmplVersion {
		t.Errorf("template written while nothing changed: resourceVersion %s → %s", tmplVersion, tmpl.ResourceVersion)
	}

	t.Log("a Work deleted by hand is created again and its member object restored")
	var w0 workv1.Work
	key0 := client.ObjectKey{Namespace: shared.ExecutionNamespace(names[0]), Name: name}
	if err := hub.Get(ctx, key0, &w0); err != nil {
		t.Fatal(err)
	}
	oldUID := w0.UID
	var d0 appsv1.Deployment
	if err := memberClients[names[0]].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d0); err != nil {
		t.Fatal(err)
	}
	oldMemberUID := d0.UID
	if err := hub.Delete(ctx, &w0); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "work re-created and member object restored", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(ctx, key0, &w); err != nil {
			return false, err.Error()
		}
		var d appsv1.Deployment
		if err := memberClients[names[0]].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return w.UID != oldUID && d.UID != oldMemberUID && ptr.Deref(d.Spec.Replicas, 0) == 2,
			fmt.Sprintf("work uid %s (old %s), member object uid %s (old %s)", w.UID, oldUID, d.UID, oldMemberUID)
	})

	t.Log("a cluster the binding leaves loses its Work and its object")
	controllertest.PlaceOn(t, hub, pp, names[:2]...)
	controllertest.WaitReplicas(t, memberClients, map[string]int32{names[0]: 3, names[1]: 3, names[2]: -1})
	testkit.Eventually(t, controllertest.Deadline, "work of the dropped cluster gone", func() (bool, string) {
		var list workv1.WorkList
		if err := hub.List(ctx, &list, client.MatchingLabels{shared.LabelBindingPermanentID: string(rb.UID)}); err != nil {
			return false, err.Error()
		}
		got := make([]string, len(list.Items))
		for i, w := range list.Items {
			got[i] = w.Namespace
		}
		return len(got) == 2 && got[0] != shared.ExecutionNamespace(names[2]) && got[1] != shared.ExecutionNamespace(names[2]),
			fmt.Sprintf("works in %v", got)
	})
	testkit.Eventually(t, controllertest.Deadline, "binding status lists the two clusters, fully applied", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		var clusters []string
		for _, it := range rb.Status.AggregatedStatus {
			clusters = append(clusters, it.ClusterName)
		}
		return len(clusters) == 2 && clusters[0] == names[0] && clusters[1] == names[1] &&
				apimeta.IsStatusConditionTrue(rb.Status.Conditions, api.ConditionFullyApplied),
			fmt.Sprintf("clusters %v, conditions %+v", clusters, rb.Status.Conditions)
	})

	t.Log("a Cluster removed from the fleet: its Work is cleaned from the host, the rest moves")
	if err := hub.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: names[1]}}); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitReplicas(t, map[string]client.Client{names[0]: memberClients[names[0]]}, map[string]int32{names[0]: 6})
	testkit.Eventually(t, controllertest.Deadline, "work of the removed cluster gone", func() (bool, string) {
		err := hub.Get(ctx, client.ObjectKey{Namespace: shared.ExecutionNamespace(names[1]), Name: name}, &workv1.Work{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})

	t.Log("deleting the template deletes the Works and, through them, the member objects")
	if err := hub.Delete(ctx, controllertest.Deployment(0)); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitReplicas(t, map[string]client.Client{names[0]: memberClients[names[0]], names[2]: memberClients[names[2]]}, map[string]int32{names[0]: -1, names[2]: -1})
	testkit.Eventually(t, controllertest.Deadline, "works and binding gone", func() (bool, string) {
		var list workv1.WorkList
		if err := hub.List(ctx, &list, client.MatchingLabels{shared.LabelBindingPermanentID: string(rb.UID)}); err != nil {
			return false, err.Error()
		}
		err := hub.Get(ctx, rbKey, &workv1.ResourceBinding{})
		return len(list.Items) == 0 && err != nil, fmt.Sprintf("%d works, binding: %v", len(list.Items), err)
	})
}

// TestWorkConflictAndPreserve shows the policy's conflictResolution and
// preserveResourcesOnDeletion travelling on the Work: an object flotilla
// does not own is refused with a message naming it and its cluster, in the
// Work's Applied condition and the binding's FullyApplied condition;
// Overwrite adopts it; deleting the template with preserveResourcesOnDeletion
// releases the member object instead of deleting it.
func TestWorkConflictAndPreserve(t *testing.T) {
	t.Parallel()
	// The policy here is namespaced: its Overwrite counts only with the
	// operator's opt-in (TestNamespacedOverwriteIsIgnored shows the default).
	env := controllertest.StartFleet(t, 3)
	env.StartControlPlane(t, func(o *shared.Options) { o.AllowNamespacedOverwrite = true })
	hub, memberClients, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	member := memberClients[names[0]]

	testkit.MustCreate(t, member, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}, Data: map[string]string{"owner": "someone else"}})
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    name: settings
  placement:
    clusterAffinity:
      clusterNames: [%s]
  preserveResourcesOnDeletion: true
`, names[0])
	testkit.MustCreate(t, hub, pp)
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}, Data: map[string]string{"owner": "flotilla"}})

	workKey := client.ObjectKey{Namespace: shared.ExecutionNamespace(names[0]), Name: shared.WorkName(api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "settings"})}
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Kind: "ConfigMap"}, "settings")}
	t.Log("Abort: the Work and the binding say which object in which cluster is refused")
	testkit.Eventually(t, controllertest.Deadline, "work and binding report the conflict", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(ctx, workKey, &w); err != nil {
			return false, err.Error()
		}
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		applied := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
		full := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionFullyApplied)
		ok := applied != nil && applied.Status == metav1.ConditionFalse &&
			strings.Contains(applied.Message, "ConfigMap default/settings") && strings.Contains(applied.Message, names[0]) &&
			full != nil && full.Status == metav1.ConditionFalse && full.Message == applied.Message &&
			w.Annotations[shared.AnnotationConflictResolution] == "Abort" && ptr.Deref(w.Spec.PreserveResourcesOnDeletion, false)
		return ok, fmt.Sprintf("work conditions %+v, annotations %v; binding conditions %+v", w.Status.Conditions, w.Annotations, rb.Status.Conditions)
	})
	var cm corev1.ConfigMap
	if err := member.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["owner"] != "someone else" {
		t.Fatalf("refused object was changed: %v", cm.Data)
	}

	t.Log("Overwrite: the object is adopted")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(pp), pp, func() {
		pp.Spec.ConflictResolution = "Overwrite"
	})
	testkit.Eventually(t, controllertest.Deadline, "member object adopted, binding fully applied", func() (bool, string) {
		if err := member.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &cm); err != nil {
			return false, err.Error()
		}
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return cm.Data["owner"] == "flotilla" && cm.Labels[render.LabelFleet] == "test" && apimeta.IsStatusConditionTrue(rb.Status.Conditions, api.ConditionFullyApplied),
			fmt.Sprintf("member data %v labels %v; binding conditions %+v", cm.Data, cm.Labels, rb.Status.Conditions)
	})

	t.Log("preserveResourcesOnDeletion: deleting the template releases the member object")
	if err := hub.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "work and binding gone", func() (bool, string) {
		werr := hub.Get(ctx, workKey, &workv1.Work{})
		rerr := hub.Get(ctx, rbKey, &workv1.ResourceBinding{})
		return apierrors.IsNotFound(werr) && apierrors.IsNotFound(rerr), fmt.Sprintf("work: %v, binding: %v", werr, rerr)
	})
	if err := member.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &cm); err != nil {
		t.Fatalf("preserved object: %v", err)
	}
	if _, owned := cm.Labels[render.LabelFleet]; owned || cm.Data["owner"] != "flotilla" {
		t.Errorf("preserved object = labels %v, data %v; want released (no fleet label) with its data", cm.Labels, cm.Data)
	}
}
