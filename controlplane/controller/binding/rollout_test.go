package binding

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/override"
)

var rolloutT0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return rolloutT0.Add(time.Duration(seconds) * time.Second) }

func metaAt(seconds int) *metav1.Time {
	t := metav1.NewTime(at(seconds))
	return &t
}

func TestJudgeGate(t *testing.T) {
	g := gateRule{bake: 30 * time.Second, timeout: 60 * time.Second}
	healthy := gateCluster{name: "a", healthy: true}
	sick := gateCluster{name: "b", reason: "1/3 replicas updated"}
	for _, tc := range []struct {
		name     string
		g        gateRule
		clusters []gateCluster
		since    *time.Time
		now      int
		want     gateResult
		wait     time.Duration
		message  string
	}{
		{name: "no updated cluster passes at once", g: g, now: 0, want: gatePass},
		{name: "healthy without bake passes", g: gateRule{timeout: time.Minute}, clusters: []gateCluster{healthy}, now: 5, want: gatePass},
		{name: "healthy starts baking", g: g, clusters: []gateCluster{healthy}, now: 5, want: gateBaking, wait: 30 * time.Second, message: "baking for bakeSeconds 30"},
		{name: "bake counts from healthySince", g: g, clusters: []gateCluster{healthy}, since: ptrTime(at(10)), now: 30, want: gateBaking, wait: 10 * time.Second},
		{name: "bake over passes", g: g, clusters: []gateCluster{healthy}, since: ptrTime(at(10)), now: 40, want: gatePass},
		{name: "unhealthy waits until the timeout", g: g, clusters: []gateCluster{healthy, sick}, now: 20, want: gateWaiting, wait: 40 * time.Second,
			message: "b: 1/3 replicas updated"},
		{name: "unhealthy during the bake fails at once", g: g, clusters: []gateCluster{healthy, sick}, since: ptrTime(at(10)), now: 20, want: gateFail,
			message: "1 cluster(s) turned unhealthy 10s into a 30s bake (at most 0 allowed): b: 1/3 replicas updated"},
		{name: "unhealthy at the timeout fails", g: g, clusters: []gateCluster{healthy, sick}, now: 60, want: gateFail,
			message: "the gate failed after timeoutSeconds 60 with 1 cluster(s) not healthy (at most 0 allowed): b: 1/3 replicas updated"},
		{name: "maxUnhealthyClusters tolerates one", g: gateRule{timeout: time.Minute, maxUnhealthy: 1}, clusters: []gateCluster{healthy, sick}, now: 70, want: gatePass},
		{name: "a timeout never fails a healthy batch that bakes", g: g, clusters: []gateCluster{healthy}, since: ptrTime(at(50)), now: 70, want: gateBaking, wait: 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeGate(tc.g, tc.clusters, rolloutT0, tc.since, at(tc.now))
			if v.result != tc.want || v.wait != tc.wait {
				t.Errorf("result %d wait %v, want %d wait %v (%s)", v.result, v.wait, tc.want, tc.wait, v.message)
			}
			if !strings.Contains(v.message, tc.message) {
				t.Errorf("message %q does not contain %q", v.message, tc.message)
			}
			// The bake clock runs exactly while the batch is healthy enough.
			if clock := v.result == gateBaking || (v.result == gatePass && len(tc.clusters) > 0); clock != (v.healthySince != nil) {
				t.Errorf("healthySince %v with result %d", v.healthySince, v.result)
			}
		})
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

// canaryRest is a canary stage (cluster a) and the rest (b, c) in batches of
// restBatch, each gated with a 10 s bake and a 60 s timeout.
func canaryRest(restBatch int) []rolloutStage {
	g := gateRule{bake: 10 * time.Second, timeout: 60 * time.Second}
	rest := [][]string{{"b", "c"}}
	if restBatch == 1 {
		rest = [][]string{{"b"}, {"c"}}
	}
	return []rolloutStage{{name: "canary", gate: g, batches: [][]string{{"a"}}}, {name: "rest", gate: g, batches: rest}}
}

// old is a cluster running revision 1, healthy; at is one running the target 2.
var (
	onOld     = rolloutCluster{hasWork: true, revision: "1", health: api.ResourceHealthy, healthy: true}
	onNew     = rolloutCluster{hasWork: true, revision: "2", current: true, health: api.ResourceHealthy, healthy: true, stableRevision: "1", restorable: true}
	brokenNew = rolloutCluster{hasWork: true, revision: "2", current: true, health: api.ResourceUnhealthy, reason: "1/3 replicas updated", stableRevision: "1", restorable: true}
)

func TestDecideRollout(t *testing.T) {
	progressing := func(stage int32, started, healthy *metav1.Time) *api.BindingRolloutStatus {
		return &api.BindingRolloutStatus{Revision: "2", Phase: api.BindingRolloutProgressing, StageIndex: stage, BatchStartTime: started, HealthySince: healthy,
			Stages: []api.BindingRolloutStage{{Name: "canary", StartTime: metaAt(0)}, {Name: "rest"}}}
	}
	halted := progressing(0, metaAt(0), nil)
	halted.Phase, halted.ObservedResume = api.BindingRolloutHalted, "r1"
	three := func(a, b, c rolloutCluster) map[string]rolloutCluster {
		return map[string]rolloutCluster{"a": a, "b": b, "c": c}
	}
	type want struct {
		phase   api.BindingRolloutPhase
		stage   string
		reason  string
		actions map[string]rolloutAction
		events  []string
		// revisions are status.rollout.clusters' revisions.
		revisions map[string]string
		message   string
		wait      time.Duration
	}
	for _, tc := range []struct {
		name     string
		prev     *api.BindingRolloutStatus
		clusters map[string]rolloutCluster
		stages   []rolloutStage
		rollback bool
		resume   string
		now      int
		want     want
	}{
		{name: "a new revision updates the canary only", clusters: three(onOld, onOld, onOld), now: 0, want: want{
			phase: api.BindingRolloutProgressing, stage: "canary", reason: api.RolloutReasonUpdating,
			actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold}, events: []string{shared.EventReasonRolloutStageStarted},
			revisions: map[string]string{"a": "2", "b": "1", "c": "1"}, message: "stage canary: updating cluster a"}},
		{name: "a first rollout gives the later stages nothing", clusters: three(rolloutCluster{}, rolloutCluster{}, rolloutCluster{}), now: 0, want: want{
			phase: api.BindingRolloutProgressing, stage: "canary", reason: api.RolloutReasonUpdating,
			actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold}, events: []string{shared.EventReasonRolloutStageStarted},
			revisions: map[string]string{"a": "2", "b": "", "c": ""}}},
		{name: "a healthy canary bakes", prev: progressing(0, metaAt(0), nil), clusters: three(onNew, onOld, onOld), now: 5, want: want{
			phase: api.BindingRolloutBaking, stage: "canary", reason: api.RolloutReasonBaking,
			actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold}, wait: 10 * time.Second}},
		{name: "a baked canary passes and the rest starts in the same pass", prev: progressing(0, metaAt(0), metaAt(5)), clusters: three(onNew, onOld, onOld), now: 15, want: want{
			phase: api.BindingRolloutProgressing, stage: "rest", reason: api.RolloutReasonUpdating,
			actions: map[string]rolloutAction{"a": rolloutPromote, "b": rolloutUpdate, "c": rolloutUpdate},
			events:  []string{shared.EventReasonRolloutGatePassed, shared.EventReasonRolloutStageStarted}, revisions: map[string]string{"a": "2", "b": "2", "c": "2"}}},
		{name: "the last gate passing completes the rollout", prev: progressing(1, metaAt(15), metaAt(20)), clusters: three(onNew, onNew, onNew), now: 30, want: want{
			phase: api.BindingRolloutComplete, reason: api.RolloutReasonComplete,
			actions: map[string]rolloutAction{"a": rolloutPromote, "b": rolloutPromote, "c": rolloutPromote},
			events:  []string{shared.EventReasonRolloutGatePassed, shared.EventReasonRolloutComplete}}},
		{name: "an unhealthy canary waits for its timeout", prev: progressing(0, metaAt(0), nil), clusters: three(brokenNew, onOld, onOld), now: 30, want: want{
			phase: api.BindingRolloutProgressing, stage: "canary", reason: api.RolloutReasonWaitingForHealth,
			actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold}, wait: 30 * time.Second, message: "a: 1/3 replicas updated"}},
		{name: "an unhealthy canary past the timeout halts", prev: progressing(0, metaAt(0), nil), clusters: three(brokenNew, onOld, onOld), now: 60, want: want{
			phase: api.BindingRolloutHalted, stage: "canary", reason: api.RolloutReasonGateTimedOut,
			actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold}, events: []string{shared.EventReasonRolloutHalted},
			revisions: map[string]string{"a": "2", "b": "1", "c": "1"}, message: "stage canary: the gate failed after timeoutSeconds 60 with 1 cluster(s) not healthy (at most 0 allowed): a: 1/3 replicas updated"}},
		{name: "rollback mode gives the canary its stable copy back", prev: progressing(0, metaAt(0), nil), clusters: three(brokenNew, onOld, onOld), rollback: true, now: 60, want: want{
			phase: api.BindingRolloutHalted, stage: "canary", reason: api.RolloutReasonRolledBack,
			actions: map[string]rolloutAction{"a": rolloutRollback, "b": rolloutHold, "c": rolloutHold}, events: []string{shared.EventReasonRolloutHalted},
			revisions: map[string]string{"a": "1", "b": "1", "c": "1"}}},
		{name: "a rolled-back canary stays as it is", prev: halted, clusters: three(onOld, onOld, onOld), rollback: true, now: 90, want: want{
			phase: api.BindingRolloutHalted, stage: "canary", actions: map[string]rolloutAction{"a": rolloutHold, "b": rolloutHold, "c": rolloutHold}}},
		{name: "a halted rollout stays halted", prev: halted, clusters: three(brokenNew, onOld, onOld), resume: "r1", now: 600, want: want{
			phase: api.BindingRolloutHalted, stage: "canary", actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold}}},
		{name: "a new resume value judges the gate again", prev: halted, clusters: three(onNew, onOld, onOld), resume: "r2", now: 600, want: want{
			phase: api.BindingRolloutBaking, stage: "canary", actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold},
			events: []string{shared.EventReasonRolloutStageStarted}, wait: 10 * time.Second}},
		{name: "a new revision resumes a halted rollout from the first stage", prev: func() *api.BindingRolloutStatus {
			h := halted.DeepCopy()
			h.Revision = "1"
			return h
		}(), clusters: three(rolloutCluster{hasWork: true, revision: "1", health: api.ResourceUnhealthy, stableRevision: "0", restorable: true}, onOld, onOld), now: 700, want: want{
			phase: api.BindingRolloutProgressing, stage: "canary", reason: api.RolloutReasonUpdating,
			actions: map[string]rolloutAction{"a": rolloutUpdate, "b": rolloutHold, "c": rolloutHold}, events: []string{shared.EventReasonRolloutStageStarted}}},
		{name: "a cluster the revision leaves unchanged needs no gate", clusters: three(rolloutCluster{hasWork: true, revision: "1", current: true, health: api.ResourceUnhealthy}, onOld, onOld), now: 0, want: want{
			phase: api.BindingRolloutProgressing, stage: "rest", reason: api.RolloutReasonUpdating,
			actions: map[string]rolloutAction{"a": rolloutPromote, "b": rolloutUpdate, "c": rolloutUpdate},
			events:  []string{shared.EventReasonRolloutStageStarted, shared.EventReasonRolloutGatePassed, shared.EventReasonRolloutStageStarted}, revisions: map[string]string{"a": "2", "b": "2", "c": "2"}}},
		{name: "batches of one: the second waits for the first", stages: canaryRest(1), prev: progressing(1, metaAt(15), nil), clusters: three(onNew, onOld, onOld), now: 16, want: want{
			phase: api.BindingRolloutProgressing, stage: "rest", reason: api.RolloutReasonUpdating,
			actions: map[string]rolloutAction{"a": rolloutPromote, "b": rolloutUpdate, "c": rolloutHold}, message: "updating cluster b"}},
		{name: "batches of one: the first passing starts the second", stages: canaryRest(1), prev: progressing(1, metaAt(15), metaAt(20)), clusters: three(onNew, onNew, onOld), now: 30, want: want{
			phase: api.BindingRolloutProgressing, stage: "rest", reason: api.RolloutReasonUpdating,
			actions: map[string]rolloutAction{"a": rolloutPromote, "b": rolloutPromote, "c": rolloutUpdate}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stages := tc.stages
			if stages == nil {
				stages = canaryRest(2)
			}
			d := decideRollout(rolloutInput{target: "2", stages: stages, rollback: tc.rollback, prev: tc.prev, resume: tc.resume, clusters: tc.clusters, now: at(tc.now)})
			st := d.status
			if st.Phase != tc.want.phase || st.Stage != tc.want.stage || (tc.want.reason != "" && st.Reason != tc.want.reason) {
				t.Errorf("phase %s stage %q reason %s, want %s %q %s (%s)", st.Phase, st.Stage, st.Reason, tc.want.phase, tc.want.stage, tc.want.reason, st.Message)
			}
			if diff := cmp.Diff(tc.want.actions, d.actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			var events []string
			for _, e := range d.events {
				events = append(events, e.reason)
			}
			if diff := cmp.Diff(tc.want.events, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tc.want.revisions != nil {
				got := map[string]string{}
				for _, c := range st.Clusters {
					got[c.Name] = c.Revision
				}
				if diff := cmp.Diff(tc.want.revisions, got); diff != "" {
					t.Errorf("cluster revisions (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(st.Message, tc.want.message) {
				t.Errorf("message %q does not contain %q", st.Message, tc.want.message)
			}
			if d.wait != tc.want.wait {
				t.Errorf("wait %v, want %v", d.wait, tc.want.wait)
			}
		})
	}
}

// TestDecideRolloutTimes: the stage records carry the times the gates
// judged, in whole seconds, and a gate never passes before its bake.
func TestDecideRolloutTimes(t *testing.T) {
	clusters := map[string]rolloutCluster{"a": onOld, "b": onOld, "c": onOld}
	now := rolloutT0.Add(300 * time.Millisecond)
	d := decideRollout(rolloutInput{target: "2", stages: canaryRest(2), clusters: clusters, now: now})
	if got := d.status.BatchStartTime.Time; !got.Equal(at(1)) {
		t.Errorf("batch start %v, want it rounded up to %v", got, at(1))
	}
	clusters["a"] = onNew
	d = decideRollout(rolloutInput{target: "2", stages: canaryRest(2), prev: &d.status, clusters: clusters, now: at(2).Add(100 * time.Millisecond)})
	if d.status.Phase != api.BindingRolloutBaking || !d.status.HealthySince.Equal(metaAt(3)) {
		t.Fatalf("phase %s healthySince %v, want Baking since %v", d.status.Phase, d.status.HealthySince, at(3))
	}
	if d = decideRollout(rolloutInput{target: "2", stages: canaryRest(2), prev: &d.status, clusters: clusters, now: at(12).Add(-time.Millisecond)}); d.status.StageIndex != 0 {
		t.Fatalf("the gate passed at %v, before healthySince+bake", at(12).Add(-time.Millisecond))
	}
	d = decideRollout(rolloutInput{target: "2", stages: canaryRest(2), prev: &d.status, clusters: clusters, now: at(13)})
	canary := d.status.Stages[0]
	want := api.BindingRolloutStage{Name: "canary", Clusters: []string{"a"}, StartTime: metaAt(1), HealthyTime: metaAt(3), PassTime: metaAt(13)}
	if diff := cmp.Diff(want, canary); diff != "" {
		t.Errorf("canary record (-want +got):\n%s", diff)
	}
	if rest := d.status.Stages[1]; !rest.StartTime.Equal(metaAt(13)) || rest.PassTime != nil {
		t.Errorf("rest record %+v, want started at %v", rest, at(13))
	}
}

func TestRolloutRevision(t *testing.T) {
	rule := func(name string, image string) override.AppliedRule {
		return override.AppliedRule{Kind: api.KindOverridePolicy, Namespace: "default", Name: name,
			Overriders: api.Overriders{ImageOverrider: []api.ImageOverrider{{Component: api.Registry, Operator: api.OverriderOpReplace, Value: image}}}}
	}
	one := []override.Applied{{Rules: []override.AppliedRule{rule("p", "r1")}}, {}}
	same := []override.Applied{{}, {Rules: []override.AppliedRule{rule("p", "r1")}}, {Rules: []override.AppliedRule{rule("p", "r1")}}}
	edited := []override.Applied{{Rules: []override.AppliedRule{rule("p", "r2")}}}
	if got := rolloutRevision(7, nil); got != "7" {
		t.Errorf("no overrides: %q, want 7", got)
	}
	a, b, c := rolloutRevision(7, one), rolloutRevision(7, same), rolloutRevision(7, edited)
	if !strings.HasPrefix(a, "7-") || a != b {
		t.Errorf("the same rules on other clusters give %q and %q, want one 7-<hash>", a, b)
	}
	if a == c {
		t.Errorf("an edited override rule keeps revision %q", a)
	}
}

func rolloutWork(image string, annotations map[string]string) *workv1.Work {
	raw := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}}}`
	a := map[string]string{shared.AnnotationTemplateGeneration: "1"}
	for k, v := range annotations {
		a[k] = v
	}
	return &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: shared.ExecutionNamespace("a"), Name: "web-1", ResourceVersion: "9", Annotations: a},
		Spec:       api.WorkSpec{Workload: api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}}}},
	}
}

// TestStageWork follows one cluster's Work through a rollout as the binding
// controller writes it (stageWork, then mergeWork onto the Work there).
func TestStageWork(t *testing.T) {
	v1 := rolloutWork("web:v1", nil)
	stableV1 := map[string]string{shared.AnnotationStableRevision: "1", shared.AnnotationStableManifests: mustManifests(t, v1)}
	for _, tc := range []struct {
		name   string
		action rolloutAction
		have   *workv1.Work
		// wantImage "" means no Work is desired.
		wantImage       string
		wantAnnotations map[string]string
	}{
		{name: "hold keeps the Work there", action: rolloutHold, have: v1, wantImage: "web:v1", wantAnnotations: map[string]string{shared.AnnotationTemplateGeneration: "1"}},
		{name: "hold writes no Work where there is none", action: rolloutHold},
		{name: "update keeps the old rendering as the stable copy", action: rolloutUpdate, have: v1, wantImage: "web:v2",
			wantAnnotations: merged(map[string]string{shared.AnnotationTemplateGeneration: "2", shared.AnnotationRolloutRevision: "2"}, stableV1)},
		{name: "update keeps an older stable copy", action: rolloutUpdate, have: rolloutWork("web:broken", merged(map[string]string{shared.AnnotationRolloutRevision: "x"}, stableV1)), wantImage: "web:v2",
			wantAnnotations: merged(map[string]string{shared.AnnotationTemplateGeneration: "2", shared.AnnotationRolloutRevision: "2"}, stableV1)},
		{name: "update of a new cluster records that it had nothing", action: rolloutUpdate, wantImage: "web:v2",
			wantAnnotations: map[string]string{shared.AnnotationTemplateGeneration: "2", shared.AnnotationRolloutRevision: "2", shared.AnnotationStableRevision: ""}},
		{name: "promote drops the stable copy", action: rolloutPromote, have: rolloutWork("web:v2", merged(map[string]string{shared.AnnotationRolloutRevision: "2"}, stableV1)), wantImage: "web:v2",
			wantAnnotations: map[string]string{shared.AnnotationTemplateGeneration: "2", shared.AnnotationRolloutRevision: "2"}},
		{name: "rollback restores the stable copy", action: rolloutRollback, have: rolloutWork("web:broken", merged(map[string]string{shared.AnnotationRolloutRevision: "2", shared.AnnotationTemplateGeneration: "2"}, stableV1)), wantImage: "web:v1",
			wantAnnotations: map[string]string{shared.AnnotationTemplateGeneration: "1", shared.AnnotationRolloutRevision: "1"}},
		{name: "rollback removes what a new cluster got", action: rolloutRollback, have: rolloutWork("web:broken", map[string]string{shared.AnnotationRolloutRevision: "2", shared.AnnotationStableRevision: ""})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := rolloutWork("web:v2", nil)
			want.ResourceVersion = ""
			want.Annotations[shared.AnnotationTemplateGeneration] = "2"
			desired := map[string]*workv1.Work{"a": want}
			var have *workv1.Work
			if tc.have != nil {
				have = tc.have.DeepCopy()
			}
			if err := stageWork(tc.action, "a", have, desired, "2"); err != nil {
				t.Fatal(err)
			}
			got, ok := desired["a"]
			if tc.wantImage == "" {
				if ok {
					t.Fatalf("a Work is desired: %v", got.Annotations)
				}
				return
			}
			if have != nil {
				got, _ = shared.MergeWork(have, got)
			}
			if !strings.Contains(string(got.Spec.Workload.Manifests[0].Raw), `"image":"`+tc.wantImage+`"`) {
				t.Errorf("manifest %s, want image %s", got.Spec.Workload.Manifests[0].Raw, tc.wantImage)
			}
			if diff := cmp.Diff(tc.wantAnnotations, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func mustManifests(t *testing.T, w *workv1.Work) string {
	t.Helper()
	desired := map[string]*workv1.Work{"a": rolloutWork("web:v2", nil)}
	if err := keepStable(desired["a"], w); err != nil {
		t.Fatal(err)
	}
	return desired["a"].Annotations[shared.AnnotationStableManifests]
}

func merged(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
