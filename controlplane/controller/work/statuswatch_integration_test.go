package work_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// statusWithin is how long a member's status change may take to reach the
// host template here: far below the resync the test sets, so only a
// watch gets it there in time, and loose enough for a busy machine.
const statusWithin = 10 * time.Second

// TestMemberStatusFollowsWatches: with the resync at ten minutes, a
// Deployment's status set in its members reaches the host template's
// status within seconds, because the members' changes are watched. A change
// to the member object that leaves its reflected status as it was writes
// nothing to the host; an object in the member with flotilla's labels
// copied onto it, under another name, makes no Work write either. A tenant
// flipping the status of flotilla's object twenty times a second gets the
// Work's status written at most about once a second.
func TestMemberStatusFollowsWatches(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 2)
	env.StartControlPlane(t, func(o *shared.Options) { o.Resync = 10 * time.Minute })
	hub, members, names := env.Hub, env.Members, env.Names
	ctx := t.Context()

	controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(names...).Divided(api.ReplicaDivisionPreferenceWeighted))
	testkit.MustCreate(t, hub, controllertest.Deployment(4))
	controllertest.WaitReplicas(t, members, map[string]int32{names[0]: 2, names[1]: 2})
	workName := shared.WorkName(api.TemplateRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})
	workOf := func(cluster string) client.ObjectKey {
		return client.ObjectKey{Namespace: shared.ExecutionNamespace(cluster), Name: workName}
	}
	for _, n := range names {
		testkit.Eventually(t, controllertest.Deadline, "work of "+n+" observed", func() (bool, string) {
			var w workv1.Work
			if err := hub.Get(ctx, workOf(n), &w); err != nil {
				return false, err.Error()
			}
			return apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkAvailable), fmt.Sprintf("conditions %+v", w.Status.Conditions)
		})
	}

	t.Log("both members report their replicas ready: the template follows in seconds, not at the resync")
	start := time.Now()
	controllertest.SetReady(t, members[names[0]], 2)
	controllertest.SetReady(t, members[names[1]], 2)
	waitTemplateReady(t, hub, 4)
	t.Logf("member status -> host template status: %v", time.Since(start).Round(10*time.Millisecond))

	t.Log("a change that leaves the reflected status alone, and a look-alike object: no host write")
	before := resourceVersions(t, hub, workOf(names[0]), workOf(names[1]))
	var d appsv1.Deployment
	testkit.MustUpdate(t, members[names[0]], client.ObjectKey{Namespace: "default", Name: "web"}, &d, func() {
		// A label: an annotation would count as a new generation of a
		// Deployment, which its reflected status shows.
		d.Labels["tenant.example.com/note"] = "touched"
	})
	lookalike := controllertest.NamedDeployment("lookalike")
	lookalike.Labels = map[string]string{render.LabelManagedBy: render.ManagedByFlotilla, render.LabelFleet: "test"}
	lookalike.Annotations = map[string]string{render.AnnotationTemplate: "apps/v1, Kind=Deployment default/web"}
	testkit.MustCreate(t, members[names[0]], lookalike)
	lookalike.Status = appsv1.DeploymentStatus{Replicas: 9, ReadyReplicas: 9}
	if err := members[names[0]].Status().Update(ctx, lookalike); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if after := resourceVersions(t, hub, workOf(names[0]), workOf(names[1])); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("works written without a status change: resourceVersions %v, then %v", before, after)
	}

	t.Log("a tenant flips flotilla's object's status 20 times a second for 3 s: the Work's status is written about once a second")
	wc, err := client.NewWithWatch(env.Host.RESTConfig(), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &workv1.WorkList{}, client.InNamespace(shared.ExecutionNamespace(names[0])))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	flood := 3 * time.Second
	last := int32(0)
	for end, i := time.Now().Add(flood), int32(0); time.Now().Before(end); i++ {
		var d appsv1.Deployment
		if err := members[names[0]].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			t.Fatal(err)
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: i % 2, AvailableReplicas: i % 2}
		if err := members[names[0]].Status().Update(ctx, &d); err != nil {
			t.Fatal(err)
		}
		last = i % 2
		time.Sleep(50 * time.Millisecond)
	}
	// The flood's last state is reported: a change coalesced into a read
	// already due is not lost.
	waitTemplateReady(t, hub, 2+last)
	controllertest.SetReady(t, members[names[0]], 2)
	writes := countWrites(w.ResultChan(), workName, 3*time.Second)
	// One per interval of the flood, one for the state set after it, and
	// two of slack for observations under way at its edges.
	if limit := int(flood/time.Second) + 3; writes > limit {
		t.Fatalf("work status written %d times during a %v flood of member status changes; want at most %d", writes, flood, limit)
	}
	t.Logf("work status writes during the flood: %d", writes)
	waitTemplateReady(t, hub, 4)
}

// waitTemplateReady waits, within statusWithin, until the host template
// default/web reports ready replicas.
func waitTemplateReady(t *testing.T, hub client.Client, ready int32) {
	t.Helper()
	testkit.Eventually(t, statusWithin, fmt.Sprintf("host template status.readyReplicas %d", ready), func() (bool, string) {
		var d appsv1.Deployment
		if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == ready, fmt.Sprintf("status %+v", d.Status)
	})
}

// resourceVersions reads the Works' resourceVersions.
func resourceVersions(t *testing.T, hub client.Client, keys ...client.ObjectKey) []string {
	t.Helper()
	out := make([]string, len(keys))
	for i, k := range keys {
		var w workv1.Work
		if err := hub.Get(t.Context(), k, &w); err != nil {
			t.Fatal(err)
		}
		out[i] = w.ResourceVersion
	}
	return out
}

// countWrites counts the modifications of the Work called name on events
// until nothing came for quiet.
func countWrites(events <-chan watch.Event, name string, quiet time.Duration) int {
	n := 0
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return n
			}
			if o, isMeta := ev.Object.(metav1.Object); isMeta && ev.Type == watch.Modified && o.GetName() == name {
				n++
			}
		case <-time.After(quiet):
			return n
		}
	}
}
