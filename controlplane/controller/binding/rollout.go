package binding

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/override"
)

// The staged rollout of continuous mode, as pure decisions: which clusters
// get the new rendering now (decideRollout) and whether a batch's gate
// passes (judgeGate), from the Works' health and the times recorded in
// status.rollout. Nothing here reads the clock or the host; rollout_works.go
// feeds it and carries out what it decides.

// gateRule is a stage's gate with the defaults filled in.
type gateRule struct {
	bake, timeout time.Duration
	maxUnhealthy  int
}

// rolloutStage is one stage of the rollout over the scheduled clusters.
type rolloutStage struct {
	name string
	gate gateRule
	// batches are the stage's clusters in update order, in batches of
	// maxConcurrentClusters (one batch when unset).
	batches [][]string
}

// clusters lists the stage's clusters in update order.
func (s rolloutStage) clusters() []string { return slices.Concat(s.batches...) }

// rolloutCluster is what the decision needs to know about one scheduled
// cluster's Work.
type rolloutCluster struct {
	// hasWork: the cluster has a Work (not being deleted).
	hasWork bool
	// revision is the rollout revision of the Work's rendering (its
	// rollout.flotilla.io/revision annotation).
	revision string
	// current: the Work already holds the rendering of the target revision.
	current bool
	// healthy: the Work's current spec is applied and observed, and the
	// template's object is Healthy there.
	healthy bool
	// health and reason are the last report, for the status.
	health api.ResourceHealth
	reason string
	// stableRevision is the revision of the rendering kept to roll back
	// to; restorable says a stable copy (or the record that there was no
	// rendering before) exists.
	stableRevision string
	restorable     bool
}

// rolloutAction is what happens to one cluster's Work.
type rolloutAction int

const (
	// rolloutHold keeps the Work as it is, or writes none.
	rolloutHold rolloutAction = iota
	// rolloutUpdate writes the target rendering and keeps (or makes) the
	// stable copy: the cluster is in the batch being gated.
	rolloutUpdate
	// rolloutPromote writes the target rendering without a stable copy: the
	// cluster's gate passed, or the rollout is complete.
	rolloutPromote
	// rolloutRollback gives the Work its stable copy back.
	rolloutRollback
)

// rolloutInput is everything decideRollout judges.
type rolloutInput struct {
	target   string
	stages   []rolloutStage
	rollback bool
	prev     *api.BindingRolloutStatus
	// resume is the template's rollout.flotilla.io/resume annotation.
	resume   string
	clusters map[string]rolloutCluster
	now      time.Time
}

// rolloutEvent is an Event the decision asks for.
type rolloutEvent struct {
	warning bool
	reason  string
	note    string
}

// rolloutDecision is the outcome of one look at a rollout.
type rolloutDecision struct {
	status  api.BindingRolloutStatus
	actions map[string]rolloutAction
	events  []rolloutEvent
	// gates are the gate results decided now ("passed", "failed"), for the metric.
	gates []string
	// wait is how soon to look again when nothing else brings the
	// binding back (a bake or a timeout running out); zero when none.
	wait time.Duration
}

// decideRollout moves a rollout on as far as the Works allow: a new target
// revision starts over at the first stage; each batch's clusters get the
// target rendering, and once they pass the gate the next batch starts in
// the same pass. Clusters of later batches keep their Work (or get none).
// A failed gate halts the rollout, and in rollback mode gives the batch's
// updated clusters their stable copy back. A halted rollout resumes on a
// new revision or a new value of the resume annotation.
func decideRollout(in rolloutInput) rolloutDecision {
	d := rolloutDecision{actions: make(map[string]rolloutAction, len(in.clusters))}
	for c := range in.clusters {
		d.actions[c] = rolloutHold
	}
	st := startRollout(in, &d)
	// Every stage before the current one passed, as did the batches of
	// the current stage before the current batch.
	for {
		if int(st.StageIndex) >= len(in.stages) {
			completeRollout(&st, in, &d)
			break
		}
		stage := in.stages[st.StageIndex]
		promoteBefore(in.stages, int(st.StageIndex), int(st.Batch), d.actions)
		st.Stage = stage.name
		var batch []string
		if int(st.Batch) < len(stage.batches) {
			batch = stage.batches[st.Batch]
		}
		if st.Phase == api.BindingRolloutHalted {
			// Halted stays halted, even when failover took the batch's
			// clusters away.
			holdHalted(batch, in, &d)
			break
		}
		if batch == nil {
			// An empty stage, or one that lost clusters since: no gate.
			advance(&st, in, &d, nil)
			continue
		}
		var pending []string
		for _, c := range batch {
			d.actions[c] = rolloutUpdate
			if !in.clusters[c].current {
				pending = append(pending, c)
			}
		}
		if len(pending) > 0 {
			st.Phase, st.Reason, st.HealthySince = api.BindingRolloutProgressing, api.RolloutReasonUpdating, nil
			st.Message = fmt.Sprintf("stage %s: updating cluster %s", stage.name, strings.Join(pending, ", "))
			break
		}
		gated := gatedClusters(batch, in)
		v := judgeGate(stage.gate, gated, timeOf(st.BatchStartTime, in.now), timePtr(st.HealthySince), in.now)
		if v.result == gatePass {
			advance(&st, in, &d, v.healthySince)
			continue
		}
		st.HealthySince = metaTime(v.healthySince)
		st.Message = fmt.Sprintf("stage %s: %s", stage.name, v.message)
		switch v.result {
		case gateBaking:
			st.Phase, st.Reason, d.wait = api.BindingRolloutBaking, api.RolloutReasonBaking, v.wait
		case gateWaiting:
			st.Phase, st.Reason, d.wait = api.BindingRolloutProgressing, api.RolloutReasonWaitingForHealth, v.wait
		case gateFail:
			st.Phase, st.Reason = api.BindingRolloutHalted, v.reason
			d.gates = append(d.gates, "failed")
			if in.rollback {
				st.Reason = api.RolloutReasonRolledBack
				st.Message += "; the updated clusters get the last healthy rendering back"
			}
			d.events = append(d.events, rolloutEvent{warning: true, reason: shared.EventReasonRolloutHalted, note: "revision " + in.target + ": " + st.Message})
			holdHalted(batch, in, &d)
		}
		break
	}
	st.Clusters = rolloutClusters(in, d.actions)
	d.status = st
	return d
}

// startRollout is the status the decision starts from: the previous one,
// a fresh one for a new target revision, or a halted one resumed.
func startRollout(in rolloutInput, d *rolloutDecision) api.BindingRolloutStatus {
	now := metav1.NewTime(ceilSecond(in.now))
	if in.prev == nil || in.prev.Revision != in.target {
		st := api.BindingRolloutStatus{Revision: in.target, Phase: api.BindingRolloutProgressing, BatchStartTime: &now, ObservedResume: in.resume}
		st.Stages = stageRecords(in.stages)
		note := "revision " + in.target + " starts"
		if in.prev != nil && in.prev.Phase == api.BindingRolloutHalted {
			note += ", resuming the rollout halted at revision " + in.prev.Revision
		}
		if len(in.stages) > 0 {
			st.Stages[0].StartTime = &now
			d.events = append(d.events, rolloutEvent{reason: shared.EventReasonRolloutStageStarted, note: note + fmt.Sprintf(" with stage %s (cluster %s)", in.stages[0].name, strings.Join(in.stages[0].clusters(), ", "))})
		}
		return st
	}
	st := *in.prev.DeepCopy()
	// The stages' clusters follow the schedule; their times stay.
	recs := stageRecords(in.stages)
	for i := range recs {
		if i < len(st.Stages) && st.Stages[i].Name == recs[i].Name {
			recs[i].StartTime, recs[i].HealthyTime, recs[i].PassTime = st.Stages[i].StartTime, st.Stages[i].HealthyTime, st.Stages[i].PassTime
		}
	}
	st.Stages = recs
	if st.Phase == api.BindingRolloutHalted && in.resume != "" && in.resume != st.ObservedResume {
		st.Phase, st.HealthySince, st.BatchStartTime, st.ObservedResume = api.BindingRolloutProgressing, nil, &now, in.resume
		d.events = append(d.events, rolloutEvent{reason: shared.EventReasonRolloutStageStarted,
			note: fmt.Sprintf("revision %s resumes at stage %s on request (annotation %s=%s)", in.target, st.Stage, shared.AnnotationRolloutResume, in.resume)})
	}
	return st
}

// stageRecords are the status records of the stages, without times.
func stageRecords(stages []rolloutStage) []api.BindingRolloutStage {
	out := make([]api.BindingRolloutStage, len(stages))
	for i, s := range stages {
		out[i] = api.BindingRolloutStage{Name: s.name, Clusters: s.clusters()}
	}
	return out
}

// advance moves on to the next batch, or the next stage when the stage's
// last batch passed; healthy is when the passing batch became healthy.
func advance(st *api.BindingRolloutStatus, in rolloutInput, d *rolloutDecision, healthy *time.Time) {
	now := metav1.NewTime(ceilSecond(in.now))
	stage := in.stages[st.StageIndex]
	st.HealthySince, st.BatchStartTime = nil, &now
	if int(st.Batch)+1 < len(stage.batches) {
		st.Batch++
		return
	}
	rec := &st.Stages[st.StageIndex]
	rec.PassTime, rec.HealthyTime = &now, metaTime(healthy)
	if rec.StartTime == nil {
		rec.StartTime = &now
	}
	if len(stage.batches) > 0 {
		d.gates = append(d.gates, "passed")
		d.events = append(d.events, rolloutEvent{reason: shared.EventReasonRolloutGatePassed, note: fmt.Sprintf("revision %s: the gate of stage %s passed", in.target, stage.name)})
	}
	st.StageIndex, st.Batch = st.StageIndex+1, 0
	if int(st.StageIndex) < len(in.stages) {
		next := in.stages[st.StageIndex]
		st.Stages[st.StageIndex].StartTime = &now
		if len(next.batches) > 0 {
			d.events = append(d.events, rolloutEvent{reason: shared.EventReasonRolloutStageStarted,
				note: fmt.Sprintf("revision %s: stage %s starts (cluster %s)", in.target, next.name, strings.Join(next.clusters(), ", "))})
		}
	}
}

// completeRollout gives every cluster the target rendering for good.
func completeRollout(st *api.BindingRolloutStatus, in rolloutInput, d *rolloutDecision) {
	for c := range in.clusters {
		d.actions[c] = rolloutPromote
	}
	if st.Phase != api.BindingRolloutComplete {
		d.events = append(d.events, rolloutEvent{reason: shared.EventReasonRolloutComplete, note: "revision " + in.target + " runs on every cluster"})
	}
	st.Phase, st.Stage, st.Reason, st.HealthySince, st.BatchStartTime = api.BindingRolloutComplete, "", api.RolloutReasonComplete, nil, nil
	st.Message = "every stage passed its gate"
}

// promoteBefore marks the clusters of the passed stages and batches.
func promoteBefore(stages []rolloutStage, stage, batch int, actions map[string]rolloutAction) {
	for i := 0; i < stage && i < len(stages); i++ {
		for _, c := range stages[i].clusters() {
			actions[c] = rolloutPromote
		}
	}
	if stage < len(stages) {
		for j := 0; j < batch && j < len(stages[stage].batches); j++ {
			for _, c := range stages[stage].batches[j] {
				actions[c] = rolloutPromote
			}
		}
	}
}

// holdHalted is what a halted batch's clusters get: in rollback mode the
// updated ones their stable copy; otherwise, and once rolled back, the Work
// they have (kept fresh when it holds the target revision).
func holdHalted(batch []string, in rolloutInput, d *rolloutDecision) {
	for _, c := range batch {
		cl := in.clusters[c]
		switch {
		case !cl.hasWork || cl.revision != in.target:
			d.actions[c] = rolloutHold
		case in.rollback && cl.restorable:
			d.actions[c] = rolloutRollback
		default:
			d.actions[c] = rolloutUpdate
		}
	}
}

// gatedClusters are the batch's clusters the gate judges: those whose
// rendering this revision changed (an unchanged cluster is skipped).
func gatedClusters(batch []string, in rolloutInput) []gateCluster {
	var out []gateCluster
	for _, c := range batch {
		cl := in.clusters[c]
		if cl.revision != in.target {
			continue
		}
		reason := cl.reason
		if reason == "" {
			reason = string(cl.health)
		}
		out = append(out, gateCluster{name: c, healthy: cl.healthy, reason: reason})
	}
	return out
}

// rolloutClusters is status.rollout.clusters: what each cluster runs once
// the actions are carried out.
func rolloutClusters(in rolloutInput, actions map[string]rolloutAction) []api.BindingRolloutCluster {
	names := make([]string, 0, len(in.clusters))
	for c := range in.clusters {
		names = append(names, c)
	}
	slices.Sort(names)
	out := make([]api.BindingRolloutCluster, 0, len(names))
	for _, c := range names {
		cl := in.clusters[c]
		item := api.BindingRolloutCluster{Name: c, Health: cl.health, Reason: cl.reason}
		switch a := actions[c]; {
		case a == rolloutRollback:
			item.Revision = cl.stableRevision
		case a == rolloutUpdate, a == rolloutPromote, cl.current:
			// A cluster the target leaves unchanged runs its rendering too.
			item.Revision = in.target
		default:
			item.Revision = cl.revision
		}
		if item.Health == api.ResourceHealthy {
			item.Reason = ""
		}
		out = append(out, item)
	}
	return out
}

// gateResult is a gate's verdict.
type gateResult int

const (
	gateWaiting gateResult = iota
	gateBaking
	gatePass
	gateFail
)

// gateCluster is one updated cluster as the gate sees it.
type gateCluster struct {
	name    string
	healthy bool
	reason  string
}

// gateVerdict is judgeGate's answer.
type gateVerdict struct {
	result gateResult
	// healthySince is when the batch became healthy enough; nil while it is not.
	healthySince *time.Time
	// wait is how long until the verdict can change by time alone.
	wait time.Duration
	// message names the clusters holding the gate and why.
	message string
	// reason is the status reason of a failed gate.
	reason string
}

// judgeGate judges a batch's gate at now: it passes once at most
// maxUnhealthy of the updated clusters are not healthy, and have stayed so
// for the bake time; it fails when more are not healthy once the timeout
// (counted from the batch's start) has run out, or at once when they turn
// unhealthy during the bake (as the Terraform provider's gate does). healthySince is when the
// batch last became healthy enough, nil when it was not at the last look.
// A batch with no updated cluster passes at once.
func judgeGate(g gateRule, clusters []gateCluster, started time.Time, healthySince *time.Time, now time.Time) gateVerdict {
	if len(clusters) == 0 {
		return gateVerdict{result: gatePass}
	}
	var bad []string
	for _, c := range clusters {
		if !c.healthy {
			bad = append(bad, c.name+": "+c.reason)
		}
	}
	if len(bad) <= g.maxUnhealthy {
		since := now
		if healthySince != nil {
			since = *healthySince
		}
		if left := since.Add(g.bake).Sub(now); left > 0 {
			return gateVerdict{result: gateBaking, healthySince: &since, wait: left,
				message: fmt.Sprintf("healthy, baking for bakeSeconds %d", int(g.bake/time.Second))}
		}
		return gateVerdict{result: gatePass, healthySince: &since}
	}
	if healthySince != nil {
		return gateVerdict{result: gateFail, reason: api.RolloutReasonBakeFailed,
			message: fmt.Sprintf("%d cluster(s) turned unhealthy %v into a %v bake (at most %d allowed): %s", len(bad), now.Sub(*healthySince).Round(time.Second), g.bake, g.maxUnhealthy, strings.Join(bad, "; "))}
	}
	if left := started.Add(g.timeout).Sub(now); left > 0 {
		// The message changes only with the clusters' health, so waiting
		// writes no status.
		return gateVerdict{result: gateWaiting, wait: left,
			message: fmt.Sprintf("waiting for cluster health (%d not healthy, at most %d allowed; timeoutSeconds %d): %s", len(bad), g.maxUnhealthy, int(g.timeout/time.Second), strings.Join(bad, "; "))}
	}
	return gateVerdict{result: gateFail, reason: api.RolloutReasonGateTimedOut,
		message: fmt.Sprintf("the gate failed after timeoutSeconds %d with %d cluster(s) not healthy (at most %d allowed): %s", int(g.timeout/time.Second), len(bad), g.maxUnhealthy, strings.Join(bad, "; "))}
}

// rolloutRevision names what a rollout rolls out: the template's
// metadata.generation, and a hash of the override rules applied to it on
// any cluster when there are any. A change to the template's metadata
// alone (labels, annotations) is no new revision, as a Deployment's rollout
// follows its pod template only.
func rolloutRevision(generation int64, applied []override.Applied) string {
	var rules []override.AppliedRule
	for _, a := range applied {
		for _, r := range a.Rules {
			if !slices.ContainsFunc(rules, func(x override.AppliedRule) bool { return sameRule(x, r) }) {
				rules = append(rules, r)
			}
		}
	}
	gen := strconv.FormatInt(generation, 10)
	if len(rules) == 0 {
		return gen
	}
	slices.SortFunc(rules, func(a, b override.AppliedRule) int {
		return strings.Compare(fmt.Sprintf("%s/%s/%s/%08d", a.Kind, a.Namespace, a.Name, a.Rule), fmt.Sprintf("%s/%s/%s/%08d", b.Kind, b.Namespace, b.Name, b.Rule))
	})
	// AppliedRule is plain data, so it always marshals.
	raw, _ := json.Marshal(rules)
	h := fnv.New32a()
	_, _ = h.Write(raw)
	return gen + "-" + rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 16))
}

func sameRule(a, b override.AppliedRule) bool {
	return a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name && a.Rule == b.Rule
}

// ceilSecond rounds t up to the second: status times are stored in whole
// seconds, and a gate must never pass before its time.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

func timeOf(t *metav1.Time, fallback time.Time) time.Time {
	if t == nil {
		return fallback
	}
	return t.Time
}

func timePtr(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

func metaTime(t *time.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	m := metav1.NewTime(ceilSecond(*t))
	return &m
}
