package estimator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// model builds a resource model from name, min, max triples.
func model(grade uint, triples ...string) api.ResourceModel {
	m := api.ResourceModel{Grade: grade}
	for i := 0; i+2 < len(triples); i += 3 {
		m.Ranges = append(m.Ranges, api.ResourceModelRange{
			Name: corev1.ResourceName(triples[i]), Min: resource.MustParse(triples[i+1]), Max: resource.MustParse(triples[i+2]),
		})
	}
	return m
}

// free builds a node's free resources from name, quantity pairs.
func free(pairs ...string) corev1.ResourceList {
	rl := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		rl[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return rl
}

func counts(models []api.ResourceModel, c ...int) []api.AllocatableModeling {
	out := make([]api.AllocatableModeling, len(c))
	for i := range c {
		out[i] = api.AllocatableModeling{Grade: models[i].Grade, Count: c[i]}
	}
	return out
}

// TestAllocatableModelings grades nodes as Karmada's modeling does
// (pkg/modeling getIndex and AddToResourceSummary, and the cluster status
// controller's getAllocatableModelings); the first cases are the nodes of
// Karmada's own tests, with the grades those tests expect.
func TestAllocatableModelings(t *testing.T) {
	// Karmada's test models: cpu [0, 1), [1m, 2); memory [0, 1024), [1024, 2048).
	karmada := []api.ResourceModel{
		model(0, "cpu", "0", "1", "memory", "0", "1024"),
		model(1, "cpu", "1m", "2", "memory", "1024", "2048"),
	}
	defaults := api.DefaultResourceModels()
	cases := []struct {
		name   string
		models []api.ResourceModel
		free   []corev1.ResourceList
		want   []api.AllocatableModeling
	}{
		{"Karmada getIndex: at both lower bounds of grade 1", karmada,
			[]corev1.ResourceList{free("cpu", "1m", "memory", "1024")}, counts(karmada, 0, 1)},
		{"Karmada getIndex: above the last grade stays in it", karmada,
			[]corev1.ResourceList{free("cpu", "20m", "memory", "102400")}, counts(karmada, 0, 1)},
		{"Karmada AddToResourceSummary: three nodes 8m/3072 and three 1m/6144 in grade 1, two 0/19 in grade 0", karmada,
			[]corev1.ResourceList{
				free("cpu", "8m", "memory", "3072"), free("cpu", "8m", "memory", "3072"), free("cpu", "8m", "memory", "3072"),
				free("cpu", "1m", "memory", "6144"), free("cpu", "1m", "memory", "6144"), free("cpu", "1m", "memory", "6144"),
				free("cpu", "0", "memory", "19"), free("cpu", "0", "memory", "19"),
			}, counts(karmada, 2, 6)},
		{"Karmada getAllocatableModelings: nodes without cpu or memory are grade 0", karmada,
			[]corev1.ResourceList{free("test", "0"), free("test", "0")}, counts(karmada, 2, 0)},
		{"the smallest per-resource grade wins: much cpu, little memory", karmada,
			[]corev1.ResourceList{free("cpu", "2", "memory", "10")}, counts(karmada, 1, 0)},
		{"default models: 4 cores and 8Gi is grade 1 by memory", defaults,
			[]corev1.ResourceList{free("cpu", "4", "memory", "8Gi")}, counts(defaults, 0, 1, 0, 0, 0, 0, 0, 0, 0)},
		{"default models: 32 cores and 256Gi is grade 6; 500m is grade 0; 200 cores and 2Ti grade 8", defaults,
			[]corev1.ResourceList{free("cpu", "32", "memory", "256Gi"), free("cpu", "500m", "memory", "64Gi"), free("cpu", "200", "memory", "2Ti")},
			counts(defaults, 1, 0, 0, 0, 0, 0, 1, 0, 1)},
		{"default models: just below a bound stays below", defaults,
			[]corev1.ResourceList{free("cpu", "3999m", "memory", "100Gi")}, counts(defaults, 0, 0, 1, 0, 0, 0, 0, 0, 0)},
		{"the lowest grade's lower bounds act as zero, as Karmada's apiserver sets them",
			[]api.ResourceModel{model(0, "cpu", "2", "4"), model(1, "cpu", "4", "8")},
			[]corev1.ResourceList{free("cpu", "1")}, []api.AllocatableModeling{{Grade: 0, Count: 1}, {Grade: 1, Count: 0}}},
		{"grades need not start at zero or be contiguous",
			[]api.ResourceModel{model(3, "cpu", "0", "4"), model(7, "cpu", "4", "8")},
			[]corev1.ResourceList{free("cpu", "5"), free("cpu", "5")}, []api.AllocatableModeling{{Grade: 3, Count: 0}, {Grade: 7, Count: 2}}},
		{"a resource a model does not bound does not hold a node back",
			[]api.ResourceModel{model(0, "cpu", "0", "4", "nvidia.com/gpu", "0", "1"), model(1, "cpu", "4", "8")},
			[]corev1.ResourceList{free("cpu", "6")}, []api.AllocatableModeling{{Grade: 0, Count: 0}, {Grade: 1, Count: 1}}},
		{"an extended resource grades", []api.ResourceModel{model(0, "nvidia.com/gpu", "0", "1"), model(1, "nvidia.com/gpu", "1", "9")},
			[]corev1.ResourceList{free("nvidia.com/gpu", "2"), free("cpu", "64")}, []api.AllocatableModeling{{Grade: 0, Count: 1}, {Grade: 1, Count: 1}}},
		{"no nodes: every grade counted zero", karmada, nil, counts(karmada, 0, 0)},
		{"no models: nothing", nil, []corev1.ResourceList{free("cpu", "1")}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := AllocatableModelings(tc.models, tc.free)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("modelings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultResourceModelsAreKarmadas(t *testing.T) {
	m := api.DefaultResourceModels()
	if len(m) != 9 {
		t.Fatalf("%d default models, want Karmada's 9", len(m))
	}
	for i, want := range []struct{ cpuMin, memMin, cpuMax, memMax string }{
		{"0", "0", "1", "4Gi"}, {"1", "4Gi", "2", "16Gi"}, {"4", "32Gi", "8", "64Gi"}, {"128", "1Ti", "9223372036854775807", "9223372036854775807"},
	} {
		idx := []int{0, 1, 3, 8}[i]
		r := m[idx].Ranges
		if m[idx].Grade != uint(idx) || r[0].Name != corev1.ResourceCPU || r[1].Name != corev1.ResourceMemory ||
			r[0].Min.Cmp(resource.MustParse(want.cpuMin)) != 0 || r[1].Min.Cmp(resource.MustParse(want.memMin)) != 0 ||
			r[0].Max.Cmp(resource.MustParse(want.cpuMax)) != 0 || r[1].Max.Cmp(resource.MustParse(want.memMax)) != 0 {
			t.Errorf("model %d = %+v, want cpu [%s, %s) memory [%s, %s)", idx, m[idx], want.cpuMin, want.cpuMax, want.memMin, want.memMax)
		}
	}
	if got := api.ResourceModelsOf(&api.ClusterSpec{ResourceModels: []api.ResourceModel{model(0, "cpu", "0", "1")}}); len(got) != 1 {
		t.Errorf("ResourceModelsOf replaced declared models: %+v", got)
	}
}
