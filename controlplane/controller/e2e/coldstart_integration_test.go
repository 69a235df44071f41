package e2e_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestBindingScheduledInThreeWrites: a new template's binding reaches
// "scheduled for its generation" in exactly three writes, watched on the
// host: the detector's create, already carrying the execution finalizer
// (no update adds it later), the scheduler's spec patch with the clusters,
// and its status patch (issue 20).
func TestBindingScheduledInThreeWrites(t *testing.T) {
	t.Parallel()
	f := controllertest.StartFleet(t, 1)
	ctx := t.Context()
	watcher, err := client.NewWithWatch(f.Host.RESTConfig(), client.Options{Scheme: f.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(ctx, &workv1.ResourceBindingList{}, client.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	f.StartControlPlane(t)
	controllertest.CreatePolicy(t, f.Hub, controllertest.WebPolicy(f.Names...))
	testkit.MustCreate(t, f.Hub, controllertest.Deployment(2))

	var writes []string
	timeout := time.After(controllertest.Deadline)
	for {
		select {
		case <-timeout:
			t.Fatalf("binding not scheduled within %v; writes seen: %v", controllertest.Deadline, writes)
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed; writes seen: %v", writes)
			}
			rb, isBinding := e.Object.(*workv1.ResourceBinding)
			if !isBinding {
				t.Fatalf("watch event %s of %T", e.Type, e.Object)
			}
			writes = append(writes, fmt.Sprintf("%s generation %d", e.Type, rb.Generation))
			if e.Type == watch.Added && !slices.Contains(rb.Finalizers, shared.FinalizerExecution) {
				t.Fatalf("binding %s created without finalizer %s: %v", rb.Name, shared.FinalizerExecution, rb.Finalizers)
			}
			c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != rb.Generation || len(rb.Spec.Clusters) == 0 {
				continue
			}
			if len(writes) != 3 || e.Type != watch.Modified {
				t.Fatalf("binding %s scheduled after %d writes, want 3 (create, spec, status): %v", rb.Name, len(writes), writes)
			}
			return
		}
	}
}
