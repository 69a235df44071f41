package scheduler_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// fuzzBytes hands out the fuzzer's bytes as small choices; past the end it
// answers zero, so every input builds some scenario.
type fuzzBytes []byte

func (b *fuzzBytes) next(n int) int {
	if len(*b) == 0 || n <= 0 {
		return 0
	}
	v := int((*b)[0]) % n
	*b = (*b)[1:]
	return v
}

func (b *fuzzBytes) flag() bool { return b.next(2) == 1 }

// fuzzScenario builds a snapshot of up to 8 clusters and a binding whose
// placement passes api validation (Schedule is only ever given validated
// policies), or ok=false when the bytes describe an invalid placement.
func fuzzScenario(data []byte) (snapshot []*api.Cluster, b scheduler.Binding, ok bool) {
	in := fuzzBytes(data)
	regions := []string{"r0", "r1", "r2"}
	n := in.next(9)
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("m%d", i)
		region := regions[in.next(len(regions))]
		w := apitest.MakeCluster(names[i]).Region(region).Zones(region+"-"+strconv.Itoa(in.next(2))).
			Provider([]string{"aws", "gcp"}[in.next(2)]).Label("tier", strconv.Itoa(in.next(3)))
		if in.next(4) != 0 {
			w.Ready()
		} else if in.flag() {
			w.NotReady()
		}
		if in.next(4) != 0 {
			w.APIs("apps/v1/Deployment", "v1/ConfigMap")
		}
		if in.next(3) != 0 {
			w.Allocatable(corev1.ResourcePods, strconv.Itoa(in.next(40))).
				Allocatable(corev1.ResourceCPU, strconv.Itoa(in.next(16))).
				Allocated(corev1.ResourceCPU, strconv.Itoa(in.next(8)))
		}
		if in.next(5) == 0 {
			w.Taint("dedicated", "x", []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute}[in.next(2)])
		}
		if in.next(8) == 0 {
			w.Deleting()
		}
		snapshot = append(snapshot, w.Obj())
	}
	pick := func() []string {
		var out []string
		for _, name := range names {
			if in.flag() {
				out = append(out, name)
			}
		}
		return out
	}

	p := apitest.MakePropagationPolicy("p", "default").SelectKind("apps/v1", "Deployment")
	switch in.next(4) {
	case 0:
		p.Duplicated()
	case 1:
		for range 1 + in.next(3) {
			p.StaticWeight(api.ClusterAffinity{ClusterNames: pick()}, int64(1+in.next(5)))
		}
	case 2:
		p.DynamicWeight()
	case 3:
		p.Divided(api.ReplicaDivisionPreferenceAggregated)
	}
	switch in.next(3) {
	case 1:
		p.ClusterNames(pick()...)
	case 2:
		p.Affinity(apitest.MakeAffinity().Field("region", corev1.NodeSelectorOpIn, regions[in.next(3)]).Obj())
	}
	if in.flag() {
		p.Toleration(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	if in.flag() {
		minG := 1 + in.next(3)
		p.Spread(api.SpreadByFieldCluster, minG, minG+in.next(3))
		if in.flag() {
			p.Spread(api.SpreadByFieldRegion, 1, 1+in.next(3))
		}
	}
	spec := p.Spec()
	if errs := api.ValidatePropagationSpec(&spec, field.NewPath("spec")); len(errs) > 0 {
		return nil, scheduler.Binding{}, false
	}
	b = scheduler.Binding{
		Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default",
			Name: "web", UID: types.UID("uid-" + strconv.Itoa(in.next(4)))},
		Replicas:  int32(in.next(30)),
		Placement: spec.Placement,
		Fresh:     in.flag(),
	}
	if in.flag() {
		b.ReplicaRequirements = &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(strconv.Itoa(100*(1+in.next(20))) + "m")}}
	}
	for _, name := range pick() {
		b.Previous = append(b.Previous, api.TargetCluster{Name: name, Replicas: int32(in.next(10))})
	}
	return snapshot, b, true
}

// FuzzSchedule checks invariants that hold for every validated placement:
// Schedule does not panic and is deterministic; a result names each
// snapshot cluster at most once; Divided results add up to the requested
// replicas and Duplicated results give every cluster all of them; every
// snapshot cluster left out has a reason; and a Snapshot of the clusters
// gives the same result.
func FuzzSchedule(f *testing.F) {
	for _, seed := range [][]byte{
		{}, {3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 5},
		{4, 0, 1, 1, 1, 1, 20, 8, 1, 1, 1, 1, 0, 1, 1, 1, 1, 30, 12, 2, 1, 1, 1, 0, 2, 1, 1, 1, 1, 10, 4, 1, 1, 1, 1, 1, 2, 1, 1, 2, 0, 0, 1, 2, 1, 25},
		{8, 2, 1, 0, 1, 1, 9, 9, 9, 4, 1, 0, 1, 2, 3, 1, 5, 5, 5, 1, 1, 2, 0, 0, 1, 1, 1, 1, 1, 3, 3, 3, 2, 1, 1, 3, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 17, 1, 3},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snapshot, b, ok := fuzzScenario(data)
		if !ok {
			t.Skip("placement fails validation")
		}
		res, err := scheduler.Schedule(snapshot, b)
		res2, err2 := scheduler.Schedule(snapshot, b)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("not deterministic: %v, then %v", err, err2)
		}
		if diff := cmp.Diff(viewOf(res), viewOf(res2)); diff != "" {
			t.Fatalf("not deterministic (-first +second):\n%s", diff)
		}
		// A Snapshot (its cached facts, affinities and name ranks) decides
		// exactly as the clusters themselves do.
		res3, err3 := scheduler.NewSnapshot(snapshot).Schedule(b)
		if (err == nil) != (err3 == nil) || (err != nil && err.Error() != err3.Error()) {
			t.Fatalf("a Snapshot errs %v, the clusters %v", err3, err)
		}
		if diff := cmp.Diff(viewOf(res), viewOf(res3)); diff != "" {
			t.Fatalf("a Snapshot decides otherwise (-clusters +Snapshot):\n%s", diff)
		}
		if err != nil {
			return
		}
		inSnapshot := map[string]bool{}
		for _, c := range snapshot {
			inSnapshot[c.Name] = true
		}
		chosen := map[string]bool{}
		var sum int32
		for _, tc := range res.Clusters {
			if !inSnapshot[tc.Name] || chosen[tc.Name] {
				t.Fatalf("result names %q, which is not in the snapshot or is named twice: %v", tc.Name, res.Clusters)
			}
			if tc.Replicas < 0 {
				t.Fatalf("negative replicas: %v", res.Clusters)
			}
			chosen[tc.Name] = true
			sum += tc.Replicas
		}
		rs := b.Placement.ReplicaScheduling
		duplicated := rs == nil || rs.ReplicaSchedulingType == api.ReplicaSchedulingTypeDuplicated
		switch {
		case duplicated:
			for _, tc := range res.Clusters {
				if tc.Replicas != b.Replicas {
					t.Fatalf("Duplicated gave %s %d replicas, want %d: %v", tc.Name, tc.Replicas, b.Replicas, res.Clusters)
				}
			}
		case sum != b.Replicas:
			t.Fatalf("Divided result holds %d replicas, want %d: %v", sum, b.Replicas, res.Clusters)
		}
		reasons := res.Reasons.Map()
		for name := range inSnapshot {
			if _, ok := reasons[name]; !chosen[name] && !ok {
				t.Fatalf("cluster %s is left out with no reason; reasons: %v", name, reasons)
			}
		}
	})
}
