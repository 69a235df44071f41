package dashboard

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
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
	// have been healthy (the bake time counts from then), against the
	// gate's bake time, or how long they have left to become healthy
	// before the gate's timeout, when the claiming policy's gate is known.
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

// gateTimer is where the current batch stands against its gate at now:
// how long it has been healthy of the bake time, or how long is left of
// the timeout for it to become healthy (both count as the binding
// controller's judgeGate counts them).
func gateTimer(ro *api.BindingRolloutStatus, g *api.RolloutGate, now time.Time) string {
	if ro.HealthySince != nil {
		return fmt.Sprintf("healthy %s of %s bake", span(now.Sub(ro.HealthySince.Time)), span(g.Bake()))
	}
	if ro.BatchStartTime == nil {
		return ""
	}
	left := ro.BatchStartTime.Add(g.Timeout()).Sub(now)
	if left <= 0 {
		return fmt.Sprintf("not healthy; timeout %s ran out", span(g.Timeout()))
	}
	return fmt.Sprintf("not healthy yet; times out in %s (timeout %s)", span(left), span(g.Timeout()))
}

// span is a duration to the second, without zero tails: 40s, 1m30s, 2m, 1h.
func span(d time.Duration) string {
	s := max(d, 0).Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
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

// gateLookup is the gate of a binding's current stage in the claiming
// policy (nil: the default gate); false when it is not known (no policy
// the user may read, or a policy whose stages no longer match the status).
type gateLookup func(rb *workv1.ResourceBinding) (*api.RolloutGate, bool)

// buildRollouts lists the bindings under a staged rollout that the user
// may see, halted first, then in progress, then complete, with the gate
// timers gate knows (nil: none).
func buildRollouts(bindings []workv1.ResourceBinding, visible func(ns string) bool, query string, page int, now time.Time, gate gateLookup) rolloutsView {
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
		if gate != nil && (ro.Phase == api.BindingRolloutProgressing || ro.Phase == api.BindingRolloutBaking) {
			if g, ok := gate(rb); ok {
				r.Baking = gateTimer(ro, g, now)
			}
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
