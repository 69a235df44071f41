package scheduler_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

func TestFitErrorMessage(t *testing.T) {
	snapshot := clusters(
		apitest.MakeCluster("east").Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule),
		apitest.MakeCluster("west").APIs("v1/ConfigMap"),
		apitest.MakeCluster("north").Deleting(),
	)
	_, err := scheduler.Schedule(snapshot, workload(2, api.Placement{}))
	want := "0/3 clusters are available: east: untolerated taint dedicated=gpu:NoSchedule; " +
		"north: cluster is being deleted; west: API apps/v1, kind=Deployment is not enabled"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
	var fit *scheduler.FitError
	if !errors.As(err, &fit) {
		t.Fatalf("error %T is not a *FitError", err)
	}
	wantFit := &scheduler.FitError{
		Stage:          scheduler.StageFilter,
		NumAllClusters: 3,
		Reasons: map[string]string{
			"east":  "untolerated taint dedicated=gpu:NoSchedule",
			"west":  "API apps/v1, kind=Deployment is not enabled",
			"north": "cluster is being deleted",
		},
	}
	if diff := cmp.Diff(wantFit, fit); diff != "" {
		t.Errorf("FitError (-want +got):\n%s", diff)
	}
}

func TestScheduleFilters(t *testing.T) {
	snapshot := clusters(
		apitest.MakeCluster("a").Region("us").APIs("apps/v1/Deployment"),
		apitest.MakeCluster("b").Region("us").Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule),
		apitest.MakeCluster("c").Taint("down", "", corev1.TaintEffectNoExecute),
		apitest.MakeCluster("d").Region("eu"),
		apitest.MakeCluster("e").Region("eu").APIs("v1/Service").PartialAPIs(),
	)
	evicting := func(b scheduler.Binding, names ...string) scheduler.Binding {
		b.EvictingClusters = names
		return b
	}
	cases := []struct {
		name    string
		binding scheduler.Binding
		want    resultView
	}{
		{"every filter", workload(1, placement(policy().Spread(api.SpreadByFieldRegion, 2, 3).Spread(api.SpreadByFieldCluster, 1, 5))),
			resultView{
				Clusters: []api.TargetCluster{tc("a", 1), tc("d", 1)},
				Reasons: map[string]string{
					"b": "untolerated taint dedicated=gpu:NoSchedule",
					"c": "untolerated taint down:NoExecute",
					"e": "API apps/v1, kind=Deployment is not in the partially collected API enablements",
				},
			}},
		{"previous placement passes NoSchedule and a partial API list, not NoExecute",
			workload(1, api.Placement{}, tc("b", 1), tc("c", 1), tc("e", 1)),
			resultView{
				Clusters: []api.TargetCluster{tc("a", 1), tc("b", 1), tc("d", 1), tc("e", 1)},
				Reasons:  map[string]string{"c": "untolerated taint down:NoExecute"},
			}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scheduler.Schedule(snapshot, tt.binding)
			if err != nil {
				t.Fatalf("Schedule: %v", err)
			}
			if diff := cmp.Diff(tt.want, viewOf(res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}

	// Affinity and eviction leave nothing: the error explains each cluster.
	onlyUSAndEU := apitest.MakeAffinity().Field("region", corev1.NodeSelectorOpIn, "us", "eu").Exclude("d").Obj()
	_, err := scheduler.Schedule(snapshot, evicting(workload(1, placement(policy().Affinity(onlyUSAndEU))), "a"))
	var fit *scheduler.FitError
	if !errors.As(err, &fit) {
		t.Fatalf("error %v is not a FitError", err)
	}
	wantReasons := map[string]string{
		"a": "template is being evicted from the cluster",
		"b": "untolerated taint dedicated=gpu:NoSchedule",
		"c": "untolerated taint down:NoExecute",
		"d": "cluster does not match the placement cluster affinity",
		"e": "API apps/v1, kind=Deployment is not in the partially collected API enablements",
	}
	if diff := cmp.Diff(wantReasons, fit.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}

func TestScheduleClusterAffinities(t *testing.T) {
	snapshot := []*api.Cluster{room("primary-1", 2), room("backup-1", 50), room("backup-2", 50)}
	terms := policy().DynamicWeight().
		AffinityTerm("primary", apitest.MakeAffinity().Names("primary-1").Obj()).
		AffinityTerm("backup", apitest.MakeAffinity().Names("backup-1", "backup-2").Obj())
	withAffinity := func(b scheduler.Binding, name string, fresh bool) scheduler.Binding {
		b.PreviousAffinityName = name
		b.Fresh = fresh
		return b
	}
	cases := []struct {
		name     string
		binding  scheduler.Binding
		wantTerm string
		want     []api.TargetCluster
	}{
		{"first term fits", workload(2, placement(terms)), "primary", []api.TargetCluster{tc("primary-1", 2)}},
		{"first term too small: the next one wins", workload(10, placement(terms)), "backup",
			[]api.TargetCluster{tc("backup-1", 5), tc("backup-2", 5)}},
		{"resume from the term used before", withAffinity(workload(2, placement(terms)), "backup", false), "backup",
			[]api.TargetCluster{tc("backup-1", 1), tc("backup-2", 1)}},
		{"fresh starts again from the first term", withAffinity(workload(2, placement(terms)), "backup", true), "primary",
			[]api.TargetCluster{tc("primary-1", 2)}},
		{"unknown previous term starts from the first", withAffinity(workload(2, placement(terms)), "gone", false), "primary",
			[]api.TargetCluster{tc("primary-1", 2)}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scheduler.Schedule(snapshot, tt.binding)
			if err != nil {
				t.Fatalf("Schedule: %v", err)
			}
			if res.AffinityName != tt.wantTerm {
				t.Errorf("AffinityName = %q, want %q", res.AffinityName, tt.wantTerm)
			}
			if diff := cmp.Diff(tt.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}

	// No term fits: the first term's FitError comes first, every term is named.
	_, err := scheduler.Schedule(snapshot, workload(500, placement(terms)))
	var fit *scheduler.FitError
	if !errors.As(err, &fit) {
		t.Fatalf("error %v is not a FitError", err)
	}
	if fit.AffinityName != "primary" || fit.Stage != scheduler.StageAssign {
		t.Errorf("first error: term %q stage %q, want primary/assign", fit.AffinityName, fit.Stage)
	}
	for _, s := range []string{`cluster affinity term "primary"`, `cluster affinity term "backup"`, "room for 100 more replicas, 500"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func TestScheduleIsDeterministic(t *testing.T) {
	var snapshot []*api.Cluster
	for _, n := range []string{"k", "c", "x", "a", "q", "m", "e", "t"} {
		snapshot = append(snapshot, apitest.MakeCluster(n).Region("r-"+n[:1]).Allocatable(corev1.ResourcePods, "7").Obj())
	}
	reversed := make([]*api.Cluster, len(snapshot))
	for i := range snapshot {
		reversed[len(snapshot)-1-i] = snapshot[i]
	}
	for _, p := range []api.Placement{
		placement(policy().Weight(3, "k", "c").Weight(1, "x", "a", "q")),
		placement(policy().DynamicWeight().Spread(api.SpreadByFieldCluster, 2, 4)),
		placement(policy().Divided(api.ReplicaDivisionPreferenceAggregated)),
	} {
		first, err1 := scheduler.Schedule(snapshot, workload(23, p, tc("m", 3)))
		second, err2 := scheduler.Schedule(reversed, workload(23, p, tc("m", 3)))
		if err1 != nil || err2 != nil {
			t.Fatalf("Schedule: %v / %v", err1, err2)
		}
		if diff := cmp.Diff(viewOf(first), viewOf(second)); diff != "" {
			t.Errorf("snapshot order changed the result (-first +second):\n%s", diff)
		}
	}
}

func TestScheduleRejectsBadInput(t *testing.T) {
	snapshot := []*api.Cluster{room("a", 1)}
	bad := api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{ReplicaSchedulingType: "Sliced"}}
	for name, b := range map[string]scheduler.Binding{
		"negative replicas": workload(-1, api.Placement{}),
		"unknown type":      workload(1, bad),
	} {
		if _, err := scheduler.Schedule(snapshot, b); err == nil || !strings.HasPrefix(err.Error(), "schedule Deployment default/web: ") {
			t.Errorf("%s: error = %v, want one naming the template", name, err)
		}
	}
}

func TestBindingFor(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	later := metav1.NewTime(earlier.Add(time.Hour))
	p := placement(policy().DynamicWeight())
	rb := &api.ResourceBinding{
		Spec: api.ResourceBindingSpec{
			Resource:              api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: evenUID},
			Replicas:              4,
			Clusters:              []api.TargetCluster{tc("a", 4)},
			GracefulEvictionTasks: []api.GracefulEvictionTask{{FromCluster: "b"}},
			RescheduleTriggeredAt: &later,
		},
		Status: api.ResourceBindingStatus{SchedulerObservedAffinityName: "primary", LastScheduledTime: &earlier},
	}
	want := scheduler.Binding{
		Resource:             rb.Spec.Resource,
		Replicas:             4,
		Placement:            p,
		Previous:             []api.TargetCluster{tc("a", 4)},
		PreviousAffinityName: "primary",
		EvictingClusters:     []string{"b"},
		Fresh:                true,
	}
	if diff := cmp.Diff(want, scheduler.BindingFor(rb, p)); diff != "" {
		t.Errorf("BindingFor (-want +got):\n%s", diff)
	}
	rb.Status.LastScheduledTime = &later
	if scheduler.BindingFor(rb, p).Fresh {
		t.Error("a reschedule request older than the last schedule must not be fresh")
	}
}
