// Package apitest holds fluent builders for the api types, for tests only:
// MakeCluster("east").Region("us").Allocatable(corev1.ResourceCPU, "4").Obj().
// Builders return api types and never share state between Obj calls. Like
// the api package it must not import client libraries or do I/O.
package apitest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ClusterWrapper builds a Cluster:
// MakeCluster("east").Region("us").Zone("a").Provider("aws").Label("k", "v").
// Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule).
// Allocatable(corev1.ResourceCPU, "4").Allocated(corev1.ResourceCPU, "1").
// APIs("apps/v1/Deployment", "v1/ConfigMap").Ready().Obj().
type ClusterWrapper struct {
	c api.Cluster
}

// MakeCluster starts a cluster with a name and nothing else: no status, no
// labels, no taints.
func MakeCluster(name string) *ClusterWrapper {
	return &ClusterWrapper{c: api.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.karmada.io/v1alpha1", Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}}
}

// Label sets a label.
func (w *ClusterWrapper) Label(key, value string) *ClusterWrapper {
	if w.c.Labels == nil {
		w.c.Labels = map[string]string{}
	}
	w.c.Labels[key] = value
	return w
}

// Provider sets spec.provider.
func (w *ClusterWrapper) Provider(p string) *ClusterWrapper {
	w.c.Spec.Provider = p
	return w
}

// Region sets spec.region.
func (w *ClusterWrapper) Region(r string) *ClusterWrapper {
	w.c.Spec.Region = r
	return w
}

// Zone sets the deprecated spec.zone.
func (w *ClusterWrapper) Zone(z string) *ClusterWrapper {
	w.c.Spec.Zone = z
	return w
}

// Zones appends to spec.zones.
func (w *ClusterWrapper) Zones(zones ...string) *ClusterWrapper {
	w.c.Spec.Zones = append(w.c.Spec.Zones, zones...)
	return w
}

// Taint appends a taint.
func (w *ClusterWrapper) Taint(key, value string, effect corev1.TaintEffect) *ClusterWrapper {
	w.c.Spec.Taints = append(w.c.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return w
}

// ResourceModel appends a resource model grade; ranges alternate resource
// name, min and max: ResourceModel(1, corev1.ResourceCPU, "1", "2").
func (w *ClusterWrapper) ResourceModel(grade uint, ranges ...string) *ClusterWrapper {
	m := api.ResourceModel{Grade: grade}
	for i := 0; i+2 < len(ranges); i += 3 {
		m.Ranges = append(m.Ranges, api.ResourceModelRange{
			Name: corev1.ResourceName(ranges[i]),
			Min:  resource.MustParse(ranges[i+1]),
			Max:  resource.MustParse(ranges[i+2]),
		})
	}
	w.c.Spec.ResourceModels = append(w.c.Spec.ResourceModels, m)
	return w
}

// Modeling records count nodes in a resource model grade.
func (w *ClusterWrapper) Modeling(grade uint, count int) *ClusterWrapper {
	s := w.summary()
	s.AllocatableModelings = append(s.AllocatableModelings, api.AllocatableModeling{Grade: grade, Count: count})
	return w
}

func (w *ClusterWrapper) summary() *api.ResourceSummary {
	if w.c.Status.ResourceSummary == nil {
		w.c.Status.ResourceSummary = &api.ResourceSummary{}
	}
	return w.c.Status.ResourceSummary
}

func setQuantity(list *corev1.ResourceList, name corev1.ResourceName, quantity string) {
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[name] = resource.MustParse(quantity)
}

// Allocatable sets one allocatable resource in the resource summary.
func (w *ClusterWrapper) Allocatable(name corev1.ResourceName, quantity string) *ClusterWrapper {
	setQuantity(&w.summary().Allocatable, name, quantity)
	return w
}

// Allocated sets one allocated resource in the resource summary.
func (w *ClusterWrapper) Allocated(name corev1.ResourceName, quantity string) *ClusterWrapper {
	setQuantity(&w.summary().Allocated, name, quantity)
	return w
}

// Allocating sets one allocating resource in the resource summary.
func (w *ClusterWrapper) Allocating(name corev1.ResourceName, quantity string) *ClusterWrapper {
	setQuantity(&w.summary().Allocating, name, quantity)
	return w
}

// APIs appends served kinds written "group/version/Kind" or "version/Kind"
// for the core group, and marks the list complete (condition
// CompleteAPIEnablements=True), as a healthy cluster reports it. Call
// PartialAPIs afterwards to mark it incomplete instead.
func (w *ClusterWrapper) APIs(kinds ...string) *ClusterWrapper {
	for _, k := range kinds {
		cut := strings.LastIndex(k, "/")
		gv, kind := k[:cut], k[cut+1:]
		idx := -1
		for i := range w.c.Status.APIEnablements {
			if w.c.Status.APIEnablements[i].GroupVersion == gv {
				idx = i
				break
			}
		}
		if idx < 0 {
			w.c.Status.APIEnablements = append(w.c.Status.APIEnablements, api.APIEnablement{GroupVersion: gv})
			idx = len(w.c.Status.APIEnablements) - 1
		}
		e := &w.c.Status.APIEnablements[idx]
		e.Resources = append(e.Resources, api.APIResource{Name: strings.ToLower(kind) + "s", Kind: kind})
	}
	return w.condition(api.ClusterConditionCompleteAPIEnablements, metav1.ConditionTrue)
}

// PartialAPIs marks the API enablements as incompletely collected
// (condition CompleteAPIEnablements=False).
func (w *ClusterWrapper) PartialAPIs() *ClusterWrapper {
	return w.condition(api.ClusterConditionCompleteAPIEnablements, metav1.ConditionFalse)
}

// Ready sets the Ready condition to True.
func (w *ClusterWrapper) Ready() *ClusterWrapper {
	return w.condition(api.ClusterConditionReady, metav1.ConditionTrue)
}

// NotReady sets the Ready condition to False.
func (w *ClusterWrapper) NotReady() *ClusterWrapper {
	return w.condition(api.ClusterConditionReady, metav1.ConditionFalse)
}

func (w *ClusterWrapper) condition(typ string, status metav1.ConditionStatus) *ClusterWrapper {
	for i := range w.c.Status.Conditions {
		if w.c.Status.Conditions[i].Type == typ {
			w.c.Status.Conditions[i].Status = status
			return w
		}
	}
	w.c.Status.Conditions = append(w.c.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: string(status)})
	return w
}

// Deleting marks the cluster as being deleted.
func (w *ClusterWrapper) Deleting() *ClusterWrapper {
	t := metav1.Unix(0, 0)
	w.c.DeletionTimestamp = &t
	return w
}

// Obj returns a deep copy of the built cluster.
func (w *ClusterWrapper) Obj() *api.Cluster {
	return w.c.DeepCopy()
}
