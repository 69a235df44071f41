package api

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// gib is one gibibyte, the unit of the default models' memory bounds.
const gib = 1 << 30

// defaultModelBounds are the cpu (cores) and memory (GiB) lower bounds of
// Karmada's nine default grades; each grade's upper bound is the next
// grade's lower bound, the last one's is unbounded.
var defaultModelBounds = [][2]int64{{0, 0}, {1, 4}, {2, 16}, {4, 32}, {8, 64}, {16, 128}, {32, 256}, {64, 512}, {128, 1024}}

// DefaultResourceModels are the resource models Karmada's apiserver writes
// into a Cluster created without any (with CustomizedClusterResourceModeling,
// on by default): grades 0 to 8 by cpu and memory, from [0, 1) cores and
// [0, 4Gi) up to 128 cores and 1024Gi and more. flotilla does not write them
// into the Cluster; ResourceModelsOf reads them in its place, so the
// modelings and the estimator see what Karmada's would.
func DefaultResourceModels() []ResourceModel {
	models := make([]ResourceModel, len(defaultModelBounds))
	for i, lo := range defaultModelBounds {
		cpuMax, memMax := int64(math.MaxInt64), int64(math.MaxInt64)
		if i+1 < len(defaultModelBounds) {
			cpuMax, memMax = defaultModelBounds[i+1][0], defaultModelBounds[i+1][1]*gib
		}
		models[i] = ResourceModel{Grade: uint(i), Ranges: []ResourceModelRange{
			{Name: corev1.ResourceCPU, Min: *resource.NewQuantity(lo[0], resource.DecimalSI), Max: *resource.NewQuantity(cpuMax, resource.DecimalSI)},
			{Name: corev1.ResourceMemory, Min: *resource.NewQuantity(lo[1]*gib, resource.BinarySI), Max: *resource.NewQuantity(memMax, resource.BinarySI)},
		}}
	}
	return models
}

// ResourceModelsOf is the resource models a Cluster is graded by: its
// spec.resourceModels, or DefaultResourceModels when it has none.
func ResourceModelsOf(spec *ClusterSpec) []ResourceModel {
	if len(spec.ResourceModels) > 0 {
		return spec.ResourceModels
	}
	return DefaultResourceModels()
}
