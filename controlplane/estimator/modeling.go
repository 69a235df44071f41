package estimator

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// AllocatableModelings grades each node's free resources (allocatable less
// what its pods request) against models and counts the nodes per grade, as
// Karmada's cluster status controller fills
// status.resourceSummary.allocatableModelings: one entry per model, in
// grade order, zero counts included.
//
// A node's grade is, over the resources the models bound, the smallest of
// the per-resource grades, where a resource's grade is the highest model
// whose lower bound the node's free amount reaches. The lowest grade's
// lower bounds count as zero (Karmada's apiserver sets them so), so every
// node has a grade. A resource a model does not bound has no lower bound in
// that model. Resources the models do not name are not looked at.
//
// models are sorted by grade first; nil models give nil.
func AllocatableModelings(models []api.ResourceModel, free []corev1.ResourceList) []api.AllocatableModeling {
	if len(models) == 0 {
		return nil
	}
	g := newGrader(models)
	out := make([]api.AllocatableModeling, len(g.grades))
	for i, grade := range g.grades {
		out[i].Grade = grade
	}
	for _, f := range free {
		a := amountsOf(f)
		out[g.grade(&a)].Count++
	}
	return out
}

// grader holds the models' lower bounds by resource, in grade order.
type grader struct {
	grades []uint
	names  []corev1.ResourceName
	// lower[k][i] is the lower bound of names[k] in the i-th model.
	lower [][]int64
}

func newGrader(models []api.ResourceModel) *grader {
	sorted := slices.Clone(models)
	slices.SortStableFunc(sorted, func(a, b api.ResourceModel) int { return int(a.Grade) - int(b.Grade) })
	g := &grader{grades: make([]uint, len(sorted))}
	for i, m := range sorted {
		g.grades[i] = m.Grade
		for _, r := range m.Ranges {
			if !slices.Contains(g.names, r.Name) {
				g.names = append(g.names, r.Name)
			}
		}
	}
	slices.Sort(g.names)
	g.lower = make([][]int64, len(g.names))
	for k, name := range g.names {
		g.lower[k] = make([]int64, len(sorted))
		for i, m := range sorted {
			if i == 0 {
				continue // the lowest grade starts at zero
			}
			for _, r := range m.Ranges {
				if r.Name == name {
					g.lower[k][i] = scaled(name, r.Min)
				}
			}
		}
	}
	return g
}

// grade is the index (in grade order) of the model a node with free
// amounts a belongs to.
func (g *grader) grade(a *amounts) int {
	best := len(g.grades) - 1
	for k, name := range g.names {
		have, _ := a.get(name)
		// The highest model whose lower bound have reaches.
		i := best
		for i > 0 && g.lower[k][i] > have {
			i--
		}
		best = i
	}
	return best
}
