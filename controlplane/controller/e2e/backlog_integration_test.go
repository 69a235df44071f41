package e2e_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// coldStartLog is what the host's watches showed during a cold start, in
// etcd revisions (one store behind one apiserver, so the revisions of
// bindings, Works and Events are comparable).
type coldStartLog struct {
	mu sync.Mutex
	// scheduled is the revision at which each binding was first seen
	// scheduled for its generation.
	scheduled map[string]int64
	// works is the creation revision of each binding's Work.
	works map[string]int64
	// scheduleEvents is the creation revision of each
	// ScheduleBindingSucceed Event, by "Kind/name" of the object it is on.
	scheduleEvents map[string][]int64
}

func (l *coldStartLog) follow(t *testing.T, w watch.Interface) {
	for e := range w.ResultChan() {
		if e.Type != watch.Added && e.Type != watch.Modified {
			continue
		}
		l.mu.Lock()
		switch o := e.Object.(type) {
		case *workv1.ResourceBinding:
			c := apimeta.FindStatusCondition(o.Status.Conditions, api.ConditionScheduled)
			if _, seen := l.scheduled[o.Name]; !seen && c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == o.Generation && len(o.Spec.Clusters) > 0 {
				l.scheduled[o.Name] = revision(t, o)
			}
		case *workv1.Work:
			if _, seen := l.works[o.Name]; !seen && e.Type == watch.Added && o.Labels[shared.LabelBindingPermanentID] != "" {
				l.works[o.Name] = revision(t, o)
			}
		case *eventsv1.Event:
			if e.Type == watch.Added && o.Reason == shared.EventReasonScheduleBindingSucceed {
				key := o.Regarding.Kind + "/" + o.Regarding.Name
				l.scheduleEvents[key] = append(l.scheduleEvents[key], revision(t, o))
			}
		}
		l.mu.Unlock()
	}
}

func revision(t *testing.T, o client.Object) int64 {
	rv, err := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Errorf("resourceVersion of %s: %v", o.GetName(), err)
	}
	return rv
}

// TestColdStartHoldsDownstreamWrites: on a cold start of many templates,
// the binding controller writes no Work, and the scheduler records no
// Event, while more templates and bindings than --schedule-backlog-hold
// wait for the detector and the scheduler, so the host serves the schedule
// first; once the queues drain, every binding has its Work, the member its
// Deployment, and every binding and template exactly one
// ScheduleBindingSucceed Event: the settled state without the hold
// (issue 40).
func TestColdStartHoldsDownstreamWrites(t *testing.T) {
	t.Parallel()
	const templates, hold = 100, 10
	f := controllertest.StartFleet(t, 1)
	ctx := t.Context()
	pp := apitest.MakePropagationPolicy("all", "default").SelectKind("apps/v1", "Deployment").ClusterNames(f.Names...)
	controllertest.CreatePolicy(t, f.Hub, pp)
	for i := range templates {
		testkit.MustCreate(t, f.Hub, controllertest.NamedDeployment(fmt.Sprintf("web-%03d", i)))
	}

	watcher, err := client.NewWithWatch(f.Host.RESTConfig(), client.Options{Scheme: f.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	log := &coldStartLog{scheduled: map[string]int64{}, works: map[string]int64{}, scheduleEvents: map[string][]int64{}}
	for _, list := range []client.ObjectList{&workv1.ResourceBindingList{}, &workv1.WorkList{}, &eventsv1.EventList{}} {
		w, err := watcher.Watch(ctx, list)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		go log.follow(t, w)
	}
	f.StartControlPlane(t, func(o *shared.Options) { o.ScheduleBacklogHold = hold })

	// Settled: every binding scheduled, its Work written, both Events. A
	// cold start of 100 templates on a loaded machine takes longer than
	// one state change.
	deadline := time.Now().Add(6 * controllertest.Deadline)
	for {
		log.mu.Lock()
		done := len(log.scheduled) == templates && len(log.works) == templates && len(log.scheduleEvents) == 2*templates
		summary := fmt.Sprintf("%d scheduled, %d works, %d objects with a schedule event", len(log.scheduled), len(log.works), len(log.scheduleEvents))
		log.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cold start of %d templates not settled: %s", templates, summary)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The events recorder writes asynchronously; a second Event on one
	// object would come shortly after the first.
	time.Sleep(2 * time.Second)

	log.mu.Lock()
	defer log.mu.Unlock()
	firstWork, firstEvent := int64(-1), int64(-1)
	for _, rv := range log.works {
		if firstWork < 0 || rv < firstWork {
			firstWork = rv
		}
	}
	for key, rvs := range log.scheduleEvents {
		if len(rvs) != 1 {
			t.Errorf("%d ScheduleBindingSucceed Events on %s, want 1", len(rvs), key)
		}
		if firstEvent < 0 || rvs[0] < firstEvent {
			firstEvent = rvs[0]
		}
	}
	before := func(rv int64) int {
		n := 0
		for _, s := range log.scheduled {
			if s < rv {
				n++
			}
		}
		return n
	}
	// With the hold, the first Work and the first Event wait until at most
	// hold templates and bindings are queued: at most hold plus the
	// detector's and scheduler's workers in flight and the bindings on
	// their way to the scheduler's informer are unscheduled then. Half of
	// the templates leaves room for those; without the hold the first
	// Work follows the first schedule.
	if n := before(firstWork); n < templates/2 {
		t.Errorf("first binding Work written when %d of %d bindings were scheduled, want at least %d (hold %d)", n, templates, templates/2, hold)
	}
	if n := before(firstEvent); n < templates/2 {
		t.Errorf("first ScheduleBindingSucceed Event written when %d of %d bindings were scheduled, want at least %d (hold %d)", n, templates, templates/2, hold)
	}
	// The settled fleet: every template is in the member.
	member := f.Members[f.Names[0]]
	testkit.Eventually(t, controllertest.Deadline, "every template in member "+f.Names[0], func() (bool, string) {
		var list appsv1.DeploymentList
		if err := member.List(ctx, &list, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == templates, fmt.Sprintf("%d Deployments, want %d", len(list.Items), templates)
	})
}
