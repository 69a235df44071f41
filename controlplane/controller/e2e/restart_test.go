package e2e_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestHostRestartLosesNothing stops the host apiserver under running
// reconcilers and starts it again: the bindings and the member objects are
// the same objects as before (same UIDs, no duplicates), and a change made
// after the restart still reaches the members.
func TestHostRestartLosesNothing(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 3)
	env.StartControlPlane(t)
	propagate(t, env)
	before := snapshot(t, env)

	t.Log("the host apiserver stops for 3 s while the reconcilers keep running")
	env.Host.StopAPIServer()
	time.Sleep(3 * time.Second)
	start := time.Now()
	if err := env.Host.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("host apiserver ready again after %v", time.Since(start).Round(10*time.Millisecond))

	t.Log("a change after the restart propagates")
	scale(t, env, 9)
	controllertest.WaitReplicas(t, env.Members, map[string]int32{env.Names[0]: 3, env.Names[1]: 3, env.Names[2]: 3})
	t.Logf("scale to 9 propagated %v after the host came back", time.Since(start).Round(10*time.Millisecond))
	after := snapshot(t, env)
	sameObjects(t, env, before, after, false)
}

// TestControlplaneRestartLosesNothing stops the control plane (the manager)
// and starts a new one, as a process restart would: nothing is lost or
// re-created, member objects are not even rewritten, a template deleted
// while it was down is removed from the members, and a change made after it
// came back propagates.
func TestControlplaneRestartLosesNothing(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 3)
	stop := env.StartControlPlane(t)
	propagate(t, env)
	// Several resyncs pass before the snapshot, so a reconciler that
	// rewrote members on every pass would show in the resourceVersions.
	time.Sleep(3 * time.Second)
	before := snapshot(t, env)

	t.Log("the control plane stops; meanwhile the ConfigMap template is deleted")
	stop()
	if err := env.Hub.Delete(t.Context(), settings()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	for name, c := range env.Members {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(settings()), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("ConfigMap on %s went while no control plane ran: %v", name, err)
		}
	}

	t.Log("a new control plane starts")
	start := time.Now()
	env.StartControlPlane(t)
	testkit.Eventually(t, controllertest.Deadline, "the deleted template's ConfigMap leaves every member", func() (bool, string) {
		for name, c := range env.Members {
			err := c.Get(t.Context(), client.ObjectKeyFromObject(settings()), &corev1.ConfigMap{})
			if !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("%s: %v", name, err)
			}
		}
		return true, ""
	})
	t.Logf("deleted template removed from members %v after the restart", time.Since(start).Round(10*time.Millisecond))
	testkit.Eventually(t, controllertest.Deadline, "the deleted template's binding is gone", func() (bool, string) {
		err := env.Hub.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Kind: "ConfigMap"}, "settings")}, &workv1.ResourceBinding{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	t.Log("unchanged objects are left alone: same UID and resourceVersion after several resyncs")
	time.Sleep(3 * time.Second)
	after := snapshot(t, env)
	delete(before.members, "ConfigMap")
	delete(before.bindings, hoststore.BindingName(schema.GroupKind{Kind: "ConfigMap"}, "settings"))
	// The deleted template's Works, one per member, went with its binding;
	// the others must stay.
	gone := 0
	for name := range before.works {
		if _, ok := after.works[name]; !ok {
			delete(before.works, name)
			gone++
		}
	}
	if gone != len(env.Names) {
		t.Errorf("%d Works went with the deleted template, want one per member (%d); left: %v", gone, len(env.Names), after.works)
	}
	sameObjects(t, env, before, after, true)

	t.Log("a change after the restart propagates")
	scale(t, env, 9)
	controllertest.WaitReplicas(t, env.Members, map[string]int32{env.Names[0]: 3, env.Names[1]: 3, env.Names[2]: 3})
	sameObjects(t, env, before, snapshot(t, env), false)
}

// propagate creates a policy and two templates, a Deployment divided over
// the three members and a ConfigMap that goes to each, and waits for them.
func propagate(t *testing.T, e controllertest.Fleet) {
	t.Helper()
	controllertest.CreatePolicy(t, e.Hub, controllertest.WebPolicy(e.Names...).Divided(api.ReplicaDivisionPreferenceWeighted).SelectName("v1", "ConfigMap", "settings"))
	testkit.MustCreate(t, e.Hub, controllertest.Deployment(6))
	testkit.MustCreate(t, e.Hub, settings())
	controllertest.WaitReplicas(t, e.Members, map[string]int32{e.Names[0]: 2, e.Names[1]: 2, e.Names[2]: 2})
	testkit.Eventually(t, controllertest.Deadline, "the ConfigMap on every member", func() (bool, string) {
		for name, c := range e.Members {
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(settings()), &corev1.ConfigMap{}); err != nil {
				return false, fmt.Sprintf("%s: %v", name, err)
			}
		}
		return true, ""
	})
}

func settings() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}, Data: map[string]string{"mode": "active"}}
}

// scale sets the Deployment template's replicas.
func scale(t *testing.T, e controllertest.Fleet, replicas int32) {
	t.Helper()
	var d appsv1.Deployment
	if err := e.Hub.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	orig := d.DeepCopy()
	d.Spec.Replicas = ptr.To(replicas)
	if err := e.Hub.Patch(t.Context(), &d, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// objectID identifies one stored version of an object.
type objectID struct {
	UID             types.UID
	ResourceVersion string
}

// fleetSnapshot is what exists: bindings by name, and per kind and member
// the flotilla objects there.
type fleetSnapshot struct {
	bindings map[string]objectID
	works    map[string]objectID            // namespace/name → Work
	members  map[string]map[string]objectID // kind → member → object
}

// snapshot lists the bindings on the host and the Deployments and
// ConfigMaps in every member's default namespace; it fails on a duplicate
// (a second object of the kind besides the template's).
func snapshot(t *testing.T, e controllertest.Fleet) fleetSnapshot {
	t.Helper()
	s := fleetSnapshot{bindings: map[string]objectID{}, works: map[string]objectID{}, members: map[string]map[string]objectID{"Deployment": {}, "ConfigMap": {}}}
	var rbs workv1.ResourceBindingList
	if err := e.Hub.List(t.Context(), &rbs); err != nil {
		t.Fatal(err)
	}
	for _, rb := range rbs.Items {
		s.bindings[rb.Name] = objectID{rb.UID, rb.ResourceVersion}
	}
	var works workv1.WorkList
	if err := e.Hub.List(t.Context(), &works); err != nil {
		t.Fatal(err)
	}
	for _, w := range works.Items {
		s.works[w.Namespace+"/"+w.Name] = objectID{w.UID, w.ResourceVersion}
	}
	for name, c := range e.Members {
		var ds appsv1.DeploymentList
		if err := c.List(t.Context(), &ds, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		for _, d := range ds.Items {
			if d.Name != "web" {
				t.Errorf("unexpected Deployment %s on %s", d.Name, name)
				continue
			}
			s.members["Deployment"][name] = objectID{d.UID, d.ResourceVersion}
		}
		var cms corev1.ConfigMapList
		if err := c.List(t.Context(), &cms, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		for _, cm := range cms.Items {
			if cm.Name == "kube-root-ca.crt" {
				continue
			}
			if cm.Name != "settings" {
				t.Errorf("unexpected ConfigMap %s on %s", cm.Name, name)
				continue
			}
			s.members["ConfigMap"][name] = objectID{cm.UID, cm.ResourceVersion}
		}
	}
	return s
}

// sameObjects fails unless after holds the same bindings, Works and member
// objects (by UID) as before; with unchanged, also the same resourceVersions
// of the member objects. Bindings' and Works' resourceVersions move with
// their status.
func sameObjects(t *testing.T, e controllertest.Fleet, before, after fleetSnapshot, unchanged bool) {
	t.Helper()
	if len(before.works) == 0 || len(after.works) != len(before.works) {
		t.Errorf("works before %v, after %v", before.works, after.works)
	}
	for name, b := range before.works {
		if a, ok := after.works[name]; !ok || a.UID != b.UID {
			t.Errorf("work %s: before %v, after %v (present %v)", name, b, a, ok)
		}
	}
	if len(after.bindings) != len(before.bindings) {
		t.Errorf("bindings before %v, after %v", before.bindings, after.bindings)
	}
	for name, b := range before.bindings {
		if a, ok := after.bindings[name]; !ok || a.UID != b.UID {
			t.Errorf("binding %s: before %v, after %v (present %v)", name, b, a, ok)
		}
	}
	for kind, byMember := range before.members {
		if len(byMember) != len(e.Names) {
			t.Errorf("%s before: on %d members, want %d", kind, len(byMember), len(e.Names))
		}
		for member, b := range byMember {
			a, ok := after.members[kind][member]
			switch {
			case !ok:
				t.Errorf("%s on %s is gone", kind, member)
			case a.UID != b.UID:
				t.Errorf("%s on %s was re-created: UID %s → %s", kind, member, b.UID, a.UID)
			case unchanged && a.ResourceVersion != b.ResourceVersion:
				t.Errorf("%s on %s was rewritten with nothing changed: resourceVersion %s → %s", kind, member, b.ResourceVersion, a.ResourceVersion)
			}
		}
	}
}
