package scheduler_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// UIDs whose FNV-1a hash is even (names ascending on ties) and odd
// (names descending).
const (
	evenUID types.UID = "uid-2"
	oddUID  types.UID = "uid-1"
)

// room is a cluster that holds n more replicas of a pod without requests.
func room(name string, n int) *api.Cluster {
	return apitest.MakeCluster(name).Allocatable(corev1.ResourcePods, strconv.Itoa(n)).Obj()
}

func clusters(cs ...*apitest.ClusterWrapper) []*api.Cluster {
	out := make([]*api.Cluster, len(cs))
	for i, c := range cs {
		out[i] = c.Obj()
	}
	return out
}

// placement returns the placement a policy builder describes.
func placement(w *apitest.PropagationPolicyWrapper) api.Placement {
	return w.Spec().Placement
}

func policy() *apitest.PropagationPolicyWrapper { return apitest.MakePropagationPolicy("p", "default") }

// workload is a Deployment binding.
func workload(replicas int32, p api.Placement, previous ...api.TargetCluster) scheduler.Binding {
	return scheduler.Binding{
		Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default",
			Name: "web", UID: evenUID},
		Replicas:  replicas,
		Placement: p,
		Previous:  previous,
	}
}

func tc(name string, replicas int32) api.TargetCluster {
	return api.TargetCluster{Name: name, Replicas: replicas}
}

func TestScheduleReplicas(t *testing.T) {
	m1to4 := clusters(apitest.MakeCluster("m1"), apitest.MakeCluster("m2"), apitest.MakeCluster("m3"), apitest.MakeCluster("m4"))
	weights2111 := placement(policy().Weight(2, "m1").Weight(1, "m2", "m3", "m4"))
	withUID := func(b scheduler.Binding, uid types.UID) scheduler.Binding { b.Resource.UID = uid; return b }
	fresh := func(b scheduler.Binding) scheduler.Binding { b.Fresh = true; return b }
	withQuota := func(b scheduler.Binding, room map[string]int64) scheduler.Binding { b.QuotaRoom = room; return b }
	dynamic := placement(policy().DynamicWeight())
	aggregated := placement(policy().Divided(api.ReplicaDivisionPreferenceAggregated))
	overflow := placement(policy().DynamicWeight().AffinityTerm("onprem", apitest.MakeAffinity().Names("p1").Obj(),
		api.OverflowClusterAffinity{AffinityName: "cloud", ClusterAffinity: *apitest.MakeAffinity().Names("c1", "c2").Obj()}))
	duplicatedOverflow := placement(policy().Duplicated().AffinityTerm("onprem", apitest.MakeAffinity().Names("p1").Obj(),
		api.OverflowClusterAffinity{AffinityName: "cloud", ClusterAffinity: *apitest.MakeAffinity().Names("c1", "c2").Obj()}))
	tiered := []*api.Cluster{room("p1", 3), room("c1", 10), room("c2", 10)}

	cases := []struct {
		name     string
		clusters []*api.Cluster
		binding  scheduler.Binding
		want     []api.TargetCluster
	}{
		{"Duplicated by default", m1to4, workload(3, api.Placement{}),
			[]api.TargetCluster{tc("m1", 3), tc("m2", 3), tc("m3", 3), tc("m4", 3)}},
		{"Duplicated explicitly, within the affinity", m1to4,
			workload(2, placement(policy().Duplicated().ClusterNames("m2", "m4"))),
			[]api.TargetCluster{tc("m2", 2), tc("m4", 2)}},
		{"non-workload goes everywhere with zero replicas", m1to4, workload(0, weights2111),
			[]api.TargetCluster{tc("m1", 0), tc("m2", 0), tc("m3", 0), tc("m4", 0)}},

		// Static weights.
		{"static 2:1:1:1, 7 replicas", m1to4, workload(7, weights2111),
			[]api.TargetCluster{tc("m1", 3), tc("m2", 2), tc("m3", 1), tc("m4", 1)}},
		{"static 2:1:1:1, 8 replicas", m1to4, workload(8, weights2111),
			[]api.TargetCluster{tc("m1", 3), tc("m2", 2), tc("m3", 2), tc("m4", 1)}},
		// Karmada's tieBreakerByUID: no UID (preview, Terraform before
		// create) sorts ties by ascending name, although FNV-1a("") is odd.
		{"static 2:1:1:1, 7 replicas, no UID: names ascending (tieBreakerByUID)", m1to4, withUID(workload(7, weights2111), ""),
			[]api.TargetCluster{tc("m1", 3), tc("m2", 2), tc("m3", 1), tc("m4", 1)}},
		{"static 2:1:1:1, 7 replicas, odd UID hash flips the name order", m1to4, withUID(workload(7, weights2111), oddUID),
			[]api.TargetCluster{tc("m1", 3), tc("m2", 1), tc("m3", 1), tc("m4", 2)}},
		{"static: a cluster takes the largest matching weight", m1to4,
			workload(6, placement(policy().Weight(1, "m1", "m2").Weight(2, "m1"))),
			[]api.TargetCluster{tc("m1", 4), tc("m2", 2)}},
		{"static: clusters without weight get nothing", m1to4,
			workload(4, placement(policy().Weight(1, "m1").Weight(0, "m2"))),
			[]api.TargetCluster{tc("m1", 4)}},
		{"static: all weights zero means equal weights", m1to4,
			workload(4, placement(policy().Weight(0, "m1", "m2"))),
			[]api.TargetCluster{tc("m1", 1), tc("m2", 1), tc("m3", 1), tc("m4", 1)}},
		{"static: Weighted without weights divides equally", m1to4,
			workload(6, placement(policy().Divided(api.ReplicaDivisionPreferenceWeighted))),
			[]api.TargetCluster{tc("m1", 2), tc("m2", 2), tc("m3", 1), tc("m4", 1)}},
		{"Divided is the default type once replicaScheduling is set", m1to4,
			workload(4, api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{}}),
			[]api.TargetCluster{tc("m1", 1), tc("m2", 1), tc("m3", 1), tc("m4", 1)}},
		{"static ignores the previous result", m1to4,
			workload(7, weights2111, tc("m4", 7)),
			[]api.TargetCluster{tc("m1", 3), tc("m2", 2), tc("m3", 1), tc("m4", 1)}},

		// Dynamic weights.
		{"dynamic 6:8:10, 12 replicas", []*api.Cluster{room("a", 6), room("b", 8), room("c", 10)},
			workload(12, dynamic), []api.TargetCluster{tc("a", 3), tc("b", 4), tc("c", 5)}},
		{"dynamic scale-up adds the new replicas by availability",
			[]*api.Cluster{room("a", 10), room("b", 30)},
			workload(8, dynamic, tc("a", 2), tc("b", 2)), []api.TargetCluster{tc("a", 3), tc("b", 5)}},
		{"dynamic scale-down follows the previous result",
			[]*api.Cluster{room("a", 0), room("b", 0)},
			workload(6, dynamic, tc("a", 6), tc("b", 3)), []api.TargetCluster{tc("a", 4), tc("b", 2)}},
		{"dynamic unchanged count keeps the previous result",
			[]*api.Cluster{room("a", 100), room("b", 0)},
			workload(5, dynamic, tc("a", 1), tc("b", 4)), []api.TargetCluster{tc("a", 1), tc("b", 4)}},
		{"dynamic: a previous cluster no longer selected is replaced",
			[]*api.Cluster{room("a", 10), room("b", 10)},
			workload(4, placement(policy().DynamicWeight().ClusterNames("a", "b")), tc("a", 2), tc("gone", 2)),
			[]api.TargetCluster{tc("a", 3), tc("b", 1)}},
		{"dynamic steady scale-up keeps replicas where there is no room",
			[]*api.Cluster{room("a", 0), room("b", 12)},
			workload(10, dynamic, tc("a", 4), tc("b", 4)), []api.TargetCluster{tc("a", 4), tc("b", 6)}},
		{"dynamic Fresh ignores the previous split",
			[]*api.Cluster{room("a", 0), room("b", 12)},
			fresh(workload(10, dynamic, tc("a", 4), tc("b", 4))), []api.TargetCluster{tc("a", 2), tc("b", 8)}},

		// A static FederatedResourceQuota assignment caps what fits.
		{"dynamic 6:8:10, a quota leaves room for 1 in c",
			[]*api.Cluster{room("a", 6), room("b", 8), room("c", 10)},
			withQuota(workload(12, dynamic), map[string]int64{"c": 1}), []api.TargetCluster{tc("a", 5), tc("b", 6), tc("c", 1)}},
		{"dynamic scale-up: a cluster at its quota gets none of the new replicas",
			[]*api.Cluster{room("a", 10), room("b", 30)},
			withQuota(workload(8, dynamic, tc("a", 2), tc("b", 2)), map[string]int64{"b": 0}), []api.TargetCluster{tc("a", 6), tc("b", 2)}},
		{"aggregated packs around a full quota",
			[]*api.Cluster{room("a", 4), room("b", 6), room("c", 8)},
			withQuota(workload(10, aggregated), map[string]int64{"c": 0}), []api.TargetCluster{tc("a", 4), tc("b", 6)}},

		// Aggregated.
		{"aggregated scale-up prefers clusters in use",
			[]*api.Cluster{room("m1", 4), room("m2", 6), room("m3", 8)},
			workload(24, aggregated, tc("m1", 4), tc("m2", 8)),
			[]api.TargetCluster{tc("m1", 7), tc("m2", 12), tc("m3", 5)}},
		{"aggregated first schedule packs into the fewest clusters",
			[]*api.Cluster{room("a", 4), room("b", 6), room("c", 8)},
			workload(10, aggregated), []api.TargetCluster{tc("b", 4), tc("c", 6)}},
		{"aggregated scale-down consolidates on the largest",
			[]*api.Cluster{room("a", 0), room("b", 0), room("c", 0)},
			workload(5, aggregated, tc("a", 2), tc("b", 6), tc("c", 4)), []api.TargetCluster{tc("b", 5)}},

		// Overflow affinities.
		{"overflow: primary tier first, the rest spills over",
			tiered, workload(10, overflow), []api.TargetCluster{tc("c1", 4), tc("c2", 3), tc("p1", 3)}},
		{"overflow: scale-down empties the last tier first",
			tiered, workload(5, overflow, tc("p1", 3), tc("c1", 4), tc("c2", 3)),
			[]api.TargetCluster{tc("c1", 1), tc("c2", 1), tc("p1", 3)}},
		{"overflow: non-workloads use the primary group only",
			tiered, workload(0, overflow), []api.TargetCluster{tc("p1", 0)}},
		{"overflow: ignored unless replicas are divided by capacity",
			tiered, workload(2, duplicatedOverflow), []api.TargetCluster{tc("p1", 2)}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scheduler.Schedule(tt.clusters, tt.binding)
			if err != nil {
				t.Fatalf("Schedule: %v", err)
			}
			if diff := cmp.Diff(tt.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleSpreadByCluster(t *testing.T) {
	// Karmada's documented example. member4 already runs 10 replicas, so
	// locality puts it first; the others follow by capacity.
	snapshot := []*api.Cluster{room("member1", 40), room("member2", 60), room("member3", 80), room("member4", 40)}
	p := placement(policy().DynamicWeight().Spread(api.SpreadByFieldCluster, 1, 2))

	res, err := scheduler.Schedule(snapshot, workload(120, p, tc("member4", 10)))
	if err != nil {
		t.Fatalf("Schedule 120: %v", err)
	}
	want := resultView{
		Clusters: []api.TargetCluster{tc("member3", 73), tc("member4", 47)},
		Reasons: map[string]string{
			"member1": "not selected by the spread constraints",
			"member2": "not selected by the spread constraints",
		},
	}
	if diff := cmp.Diff(want, viewOf(res)); diff != "" {
		t.Errorf("120 replicas (-want +got):\n%s", diff)
	}

	_, err = scheduler.Schedule(snapshot, workload(200, p, tc("member4", 10)))
	var fit *scheduler.FitError
	if !errors.As(err, &fit) {
		t.Fatalf("200 replicas: error %v is not a FitError", err)
	}
	if fit.Stage != scheduler.StageSelect || !strings.Contains(fit.Error(), "no enough resource") {
		t.Errorf("200 replicas: got stage %q, error %q", fit.Stage, fit.Error())
	}
	wantReasons := map[string]string{
		"member1": "feasible, room for 40 more replicas",
		"member2": "feasible, room for 60 more replicas",
		"member3": "feasible, room for 80 more replicas",
		"member4": "feasible, room for 40 more replicas besides the 10 it runs",
	}
	if diff := cmp.Diff(wantReasons, fit.Reasons); diff != "" {
		t.Errorf("200 replicas reasons (-want +got):\n%s", diff)
	}
}

func TestScheduleSpreadByRegion(t *testing.T) {
	snapshot := clusters(
		apitest.MakeCluster("us-1").Region("us").Allocatable(corev1.ResourcePods, "10"),
		apitest.MakeCluster("us-2").Region("us").Allocatable(corev1.ResourcePods, "10"),
		apitest.MakeCluster("eu-1").Region("eu").Allocatable(corev1.ResourcePods, "10"),
		apitest.MakeCluster("nowhere").Allocatable(corev1.ResourcePods, "10"),
	)
	p := placement(policy().Duplicated().Spread(api.SpreadByFieldRegion, 2, 2).Spread(api.SpreadByFieldCluster, 2, 2))
	res, err := scheduler.Schedule(snapshot, workload(1, p, tc("eu-1", 1)))
	if err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	want := resultView{
		Clusters: []api.TargetCluster{tc("eu-1", 1), tc("us-1", 1)},
		Reasons: map[string]string{
			"nowhere": "cluster has no region to spread by",
			"us-2":    "not selected by the spread constraints",
		},
	}
	if diff := cmp.Diff(want, viewOf(res)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// resultView is a Result with its reasons as a map, for comparing.
type resultView struct {
	Clusters     []api.TargetCluster
	AffinityName string
	Reasons      map[string]string
}

func viewOf(r scheduler.Result) resultView {
	return resultView{Clusters: r.Clusters, AffinityName: r.AffinityName, Reasons: r.Reasons.Map()}
}

// TestQuotaRoomIsTheReason: a cluster that a static quota assignment caps
// says so when the template does not fit, so "why not cluster X" names the
// quota rather than the cluster's capacity.
func TestQuotaRoomIsTheReason(t *testing.T) {
	b := workload(12, placement(policy().DynamicWeight()))
	b.QuotaRoom = map[string]int64{"a": 1}
	_, err := scheduler.Schedule([]*api.Cluster{room("a", 10), room("b", 5)}, b)
	var fit *scheduler.FitError
	if !errors.As(err, &fit) {
		t.Fatalf("Schedule = %v, want a FitError", err)
	}
	if got := fit.Reasons["a"]; got != "feasible, room for 1 more replicas (as its FederatedResourceQuota assignment allows)" {
		t.Errorf("reason for a = %q", got)
	}
	if got := fit.Reasons["b"]; strings.Contains(got, "FederatedResourceQuota") {
		t.Errorf("reason for b = %q, names a quota it does not have", got)
	}
}
