package estimator

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// scaled is a quantity in the unit the estimator divides in: millicores for
// cpu, whole units for everything else, as the scheduler's general
// estimator does.
func scaled(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// amounts is a resource list in estimator units. cpu, memory and pods are
// fields, since every node and nearly every pod has them; anything else
// (ephemeral storage, extended resources) goes in other.
type amounts struct {
	cpu, memory, pods int64
	other             map[corev1.ResourceName]int64
}

func amountsOf(list corev1.ResourceList) amounts {
	var a amounts
	for name, q := range list {
		a.set(name, scaled(name, q))
	}
	return a
}

func (a *amounts) get(name corev1.ResourceName) (int64, bool) {
	switch name {
	case corev1.ResourceCPU:
		return a.cpu, true
	case corev1.ResourceMemory:
		return a.memory, true
	case corev1.ResourcePods:
		return a.pods, true
	}
	n, ok := a.other[name]
	return n, ok
}

func (a *amounts) set(name corev1.ResourceName, n int64) {
	switch name {
	case corev1.ResourceCPU:
		a.cpu = n
	case corev1.ResourceMemory:
		a.memory = n
	case corev1.ResourcePods:
		a.pods = n
	default:
		if a.other == nil {
			a.other = map[corev1.ResourceName]int64{}
		}
		a.other[name] = n
	}
}

// add adds b times sign (1 or -1) to a.
func (a *amounts) add(b amounts, sign int64) {
	a.cpu += sign * b.cpu
	a.memory += sign * b.memory
	a.pods += sign * b.pods
	for name, n := range b.other {
		if a.other == nil {
			a.other = map[corev1.ResourceName]int64{}
		}
		a.other[name] += sign * n
	}
}

// list is a in resource.Quantity form.
func (a amounts) list() corev1.ResourceList {
	out := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(a.cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(a.memory, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(a.pods, resource.DecimalSI),
	}
	for name, n := range a.other {
		out[name] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	return out
}
