package dashboard

import (
	"sort"
	"strings"
	"time"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// rolloutRow is one staged rollout on the rollouts page.
type rolloutRow struct {
	Namespace, Name, Template string
	Revision, Phase, Stage    string
	Batch                     int32
	// Reason and Message say why it waits or halted.
	Reason, Message string
	// Batch is the age of the current batch; Baking how long its clusters
	// have been healthy (the bake time counts from then).
	BatchAge, Baking string
	// Stages are the stages' names, each marked passed or not.
	Stages []stageRow
}

// stageRow is one stage of a rollout.
type stageRow struct {
	Name     string
	Clusters string
	Passed   bool
	Current  bool
}

// rolloutsView is the rollouts page: halted ones first.
type rolloutsView struct {
	Rollouts []rolloutRow
	Query    string
	Page     pager
	Hidden   bool
}

func phaseRank(p string) int {
	switch p {
	case "Halted":
		return 0
	case "Progressing", "Baking":
		return 1
	}
	return 2
}

// buildRollouts lists the bindings under a staged rollout that the user
// may see, halted first, then in progress, then complete.
func buildRollouts(bindings []workv1.ResourceBinding, visible func(ns string) bool, query string, page int, now time.Time) rolloutsView {
	v := rolloutsView{Query: query}
	seen := map[string]bool{}
	var rows []rolloutRow
	for i := range bindings {
		rb := &bindings[i]
		ro := rb.Status.Rollout
		if ro == nil {
			continue
		}
		allowed, known := seen[rb.Namespace]
		if !known {
			allowed = visible(rb.Namespace)
			seen[rb.Namespace] = allowed
		}
		if !allowed {
			v.Hidden = true
			continue
		}
		if query != "" && !strings.Contains(rb.Name, query) && !strings.Contains(rb.Spec.Resource.Name, query) {
			continue
		}
		r := rolloutRow{
			Namespace: rb.Namespace, Name: rb.Name, Template: rb.Spec.Resource.Kind + " " + rb.Spec.Resource.Namespace + "/" + rb.Spec.Resource.Name,
			Revision: ro.Revision, Phase: string(ro.Phase), Stage: ro.Stage, Batch: ro.Batch, Reason: ro.Reason, Message: ro.Message,
		}
		if ro.BatchStartTime != nil {
			r.BatchAge = ago(now.Sub(ro.BatchStartTime.Time))
		}
		if ro.HealthySince != nil {
			r.Baking = ago(now.Sub(ro.HealthySince.Time))
		}
		for _, s := range ro.Stages {
			r.Stages = append(r.Stages, stageRow{Name: s.Name, Clusters: strings.Join(s.Clusters, ", "), Passed: s.PassTime != nil, Current: s.Name == ro.Stage})
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if a, b := phaseRank(rows[i].Phase), phaseRank(rows[j].Phase); a != b {
			return a < b
		}
		if rows[i].Namespace != rows[j].Namespace {
			return rows[i].Namespace < rows[j].Namespace
		}
		return rows[i].Name < rows[j].Name
	})
	v.Page = paginate(len(rows), page)
	v.Rollouts = rows[v.Page.from:v.Page.to]
	return v
}
