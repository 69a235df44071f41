package scheduler

import (
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestAvailableFromMatchesAvailable checks the compact estimate against the
// resource-map one on random summaries, over- and under-committed, with and
// without each requested resource.
func TestAvailableFromMatchesAvailable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	names := []corev1.ResourceName{corev1.ResourcePods, corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu"}
	quantity := func(name corev1.ResourceName) resource.Quantity {
		switch name {
		case corev1.ResourceCPU:
			return *resource.NewMilliQuantity(r.Int64N(100000), resource.DecimalSI)
		case corev1.ResourceMemory:
			return *resource.NewQuantity(r.Int64N(1<<40), resource.BinarySI)
		}
		return *resource.NewQuantity(r.Int64N(500), resource.DecimalSI)
	}
	list := func() corev1.ResourceList {
		l := corev1.ResourceList{}
		for _, n := range names {
			if r.IntN(4) != 0 {
				l[n] = quantity(n)
			}
		}
		return l
	}
	for i := range 20000 {
		c := &api.Cluster{}
		if r.IntN(10) != 0 {
			c.Status.ResourceSummary = &api.ResourceSummary{Allocatable: list(), Allocated: list(), Allocating: list()}
		}
		req := &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{}}
		for _, n := range names[1:] {
			if r.IntN(2) == 0 {
				req.ResourceRequest[n] = quantity(n)
			}
		}
		e := newEstimator(req)
		f := freeOf(c.Status.ResourceSummary)
		if want, got := e.available(c), e.availableFrom(&f, c); want != got {
			t.Fatalf("case %d: availableFrom = %d, available = %d; summary %+v, request %v",
				i, got, want, c.Status.ResourceSummary, req.ResourceRequest)
		}
	}
}
