package binding_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// The canary's gate in these tests: a bake long enough to see in the
// members' timestamps, a timeout short enough to wait for.
const (
	rolloutBake    = 3
	rolloutTimeout = 10
	// rolloutDeadline bounds a whole stage: apply, kwok's pods, bake.
	rolloutDeadline = 60 * time.Second
)

// startFullFleet starts an APIServerOnly host and three Full members (kwok
// runs their pods, so Deployments really roll out and a broken image never
// becomes Ready), and registers the members.
func startFullFleet(t *testing.T) controllertest.Fleet {
	t.Helper()
	host := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly}).Clusters[0]
	members := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.Full}).Clusters
	hub := controllertest.SystemHost(t, host)
	for _, m := range members {
		controllertest.RegisterMember(t, hub, m)
	}
	clients, names := controllertest.MemberClients(t, members, controllertest.Scheme(t))
	return controllertest.Fleet{Host: host, Hub: hub, Members: clients, Clusters: members, Names: names}
}

// canaryPolicy places web on every member, the first member as the canary
// stage (bake rolloutBake s, timeout rolloutTimeout s) and the rest after.
func canaryPolicy(names []string, onFailure api.RolloutFailureAction) *policyv1.PropagationPolicy {
	p := controllertest.WebPolicy(names...).Obj()
	p.Spec.Rollout = &api.RolloutStrategy{
		OnGateFailure: onFailure,
		Stages: []api.RolloutStage{
			{Name: "canary", ClusterAffinity: apitest.MakeAffinity().Names(names[0]).Obj(),
				Gate: &api.RolloutGate{BakeSeconds: rolloutBake, TimeoutSeconds: ptr.To[int32](rolloutTimeout)}},
			{Name: "rest"},
		},
	}
	return &policyv1.PropagationPolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
}

// TestStagedRollout runs a staged rollout in continuous mode over three
// real members, canary first: a good image reaches the rest only after the
// canary has been healthy for the bake time (from the members' own
// timestamps); a broken image stops at the 1-replica canary (whose old
// pod stays available: the rollout is not complete), the binding says
// Halted and why, and the other members keep the previous Deployment; a fix
// resumes, also after a restart of the control plane; in rollback mode a
// broken image's canary gets the last healthy rendering back; failover
// still moves the binding off a member while the rollout is halted.
func TestStagedRollout(t *testing.T) {
	env := startFullFleet(t)
	stop := env.StartControlPlane(t)
	hub, names := env.Hub, env.Names
	canary, rest := names[0], names[1:]
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}

	pp := canaryPolicy(names, "")
	testkit.MustCreate(t, hub, pp)
	// One replica, the common canary size: with a broken image the old pod
	// stays available beside the new one, so Karmada's Deployment rule
	// calls it healthy; the gate's rollout-complete rule must halt it.
	d := controllertest.Deployment(1)
	d.Spec.Template.Spec.Containers[0].Image = "web:v1"
	testkit.MustCreate(t, hub, d)

	t.Log("first rollout: the canary gets web:v1, the rest only after its gate")
	rb := waitStaged(t, hub, rbKey, api.BindingRolloutComplete, "")
	assertStagedAfterBake(t, env, canary, rest, "web:v1")
	assertStageRecords(t, rb)

	t.Log("a good image rolls through the stages in order")
	controllertest.SetImage(t, hub, "web:v2")
	rb = waitStaged(t, hub, rbKey, api.BindingRolloutComplete, rb.Status.Rollout.Revision)
	assertStagedAfterBake(t, env, canary, rest, "web:v2")
	assertStageRecords(t, rb)
	for _, c := range rb.Status.Rollout.Clusters {
		if c.Revision != rb.Status.Rollout.Revision || c.Health != api.ResourceHealthy {
			t.Errorf("cluster %+v after the rollout of revision %s, want it on the revision and Healthy", c, rb.Status.Rollout.Revision)
		}
	}

	t.Log("a broken image stops at the canary")
	failed := metrics.RolloutGates.WithLabelValues("failed")
	failedBefore := testutil.ToFloat64(failed)
	before := memberVersions(t, env, rest)
	controllertest.SetImage(t, hub, "web:broken")
	rb = waitStaged(t, hub, rbKey, api.BindingRolloutHalted, rb.Status.Rollout.Revision)
	st := rb.Status.Rollout
	t.Logf("halted: reason %s, message %q", st.Reason, st.Message)
	if want := canary + ": rollout not complete: 1 old replica(s) pending"; st.Stage != "canary" || st.Reason != api.RolloutReasonGateTimedOut || !strings.Contains(st.Message, want) {
		t.Errorf("halted rollout %+v, want the canary stage's gate timed out with %q", st, want)
	}
	if got := memberImage(t, env, canary); got != "web:broken" {
		t.Errorf("the canary runs %s, want web:broken", got)
	}
	if after := memberVersions(t, env, rest); !maps.Equal(before, after) {
		t.Errorf("the other members' Deployments changed while the canary halted: before %v, after %v", before, after)
	}
	for _, c := range rest {
		if got := memberImage(t, env, c); got != "web:v2" {
			t.Errorf("member %s runs %s, want the previous web:v2", c, got)
		}
	}
	cond := fullyAppliedOf(rb)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "RolloutHalted" {
		t.Errorf("FullyApplied %+v, want False RolloutHalted", cond)
	}
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: "ResourceBinding", Name: rbKey.Name, Reason: shared.EventReasonRolloutStageStarted, Type: corev1.EventTypeNormal, Note: "stage rest starts (cluster " + strings.Join(rest, ", ")},
		{Kind: "Deployment", Name: "web", Reason: shared.EventReasonRolloutGatePassed, Type: corev1.EventTypeNormal, Note: "the gate of stage canary passed"},
		{Kind: "ResourceBinding", Name: rbKey.Name, Reason: shared.EventReasonRolloutComplete, Type: corev1.EventTypeNormal, Note: "runs on every cluster"},
		{Kind: "Deployment", Name: "web", Reason: shared.EventReasonRolloutHalted, Type: corev1.EventTypeWarning, Note: "stage canary: the gate failed"},
	})
	if got := testutil.ToFloat64(failed) - failedBefore; got < 1 {
		t.Errorf("flotilla_rollout_gates_total{result=failed} moved by %v, want at least 1", got)
	}

	t.Log("the resume annotation judges the failed gate again: still broken, it halts again")
	var tmpl appsv1.Deployment
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &tmpl); err != nil {
		t.Fatal(err)
	}
	orig := tmpl.DeepCopy()
	metav1.SetMetaDataAnnotation(&tmpl.ObjectMeta, shared.AnnotationRolloutResume, "1")
	if err := hub.Patch(t.Context(), &tmpl, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	firstHalt := st.BatchStartTime
	testkit.Eventually(t, 2*rolloutDeadline, "halted again after the resume", func() (bool, string) {
		if err := hub.Get(t.Context(), rbKey, rb); err != nil {
			return false, err.Error()
		}
		st := rb.Status.Rollout
		return st.ObservedResume == "1" && st.Phase == api.BindingRolloutHalted && st.BatchStartTime.After(firstHalt.Time),
			fmt.Sprintf("resume %q phase %s batch start %v: %s", st.ObservedResume, st.Phase, st.BatchStartTime, st.Message)
	})
	if after := memberVersions(t, env, rest); !maps.Equal(before, after) {
		t.Errorf("the other members' Deployments changed on the resume: before %v, after %v", before, after)
	}

	t.Log("the control plane restarts while the rollout is halted: the state is the binding's and the Works'")
	stop()
	env.StartControlPlane(t)

	t.Log("a fix resumes the halted rollout")
	halted := rb.Status.Rollout.Revision
	controllertest.SetImage(t, hub, "web:v3")
	rb = waitStaged(t, hub, rbKey, api.BindingRolloutComplete, halted)
	assertStagedAfterBake(t, env, canary, rest, "web:v3")

	t.Log("rollback mode: a broken image's canary gets web:v3 back")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(pp), pp, func() {
		pp.Spec.Rollout.OnGateFailure = api.RolloutRollback
	})
	before = memberVersions(t, env, rest)
	controllertest.SetImage(t, hub, "web:broken")
	rb = waitStaged(t, hub, rbKey, api.BindingRolloutHalted, rb.Status.Rollout.Revision)
	if st := rb.Status.Rollout; st.Reason != api.RolloutReasonRolledBack {
		t.Errorf("halted rollout %+v, want reason RolledBack", st)
	}
	testkit.Eventually(t, rolloutDeadline, "the canary runs web:v3 again", func() (bool, string) {
		got := memberImage(t, env, canary)
		return got == "web:v3", "canary image " + got
	})
	if after := memberVersions(t, env, rest); !maps.Equal(before, after) {
		t.Errorf("the other members' Deployments changed during the rollback: before %v, after %v", before, after)
	}

	t.Log("failover while the rollout is halted: the last member's apiserver stops and the binding leaves it")
	gone := names[2]
	env.Clusters[2].StopAPIServer()
	testkit.Eventually(t, 2*rolloutDeadline, "the binding left "+gone+" and the rollout stays halted", func() (bool, string) {
		if err := hub.Get(t.Context(), rbKey, rb); err != nil {
			return false, err.Error()
		}
		st := rb.Status.Rollout
		var clusters []string
		for _, c := range st.Clusters {
			clusters = append(clusters, c.Name)
		}
		left := !slices.ContainsFunc(rb.Spec.Clusters, func(tc api.TargetCluster) bool { return tc.Name == gone }) && !slices.Contains(clusters, gone)
		return left && st.Phase == api.BindingRolloutHalted && st.Stage == "canary",
			fmt.Sprintf("spec.clusters %v, rollout clusters %v, phase %s stage %s", rb.Spec.Clusters, clusters, st.Phase, st.Stage)
	})
	if got := memberImage(t, env, names[1]); got != "web:v3" {
		t.Errorf("member %s runs %s after the failover, want web:v3 (its stage has not started)", names[1], got)
	}
}

// waitStaged waits until the binding's rollout of a revision other than
// old reaches phase, and returns the binding.
func waitStaged(t *testing.T, hub client.Client, key client.ObjectKey, phase api.BindingRolloutPhase, old string) *workv1.ResourceBinding {
	t.Helper()
	var rb workv1.ResourceBinding
	testkit.Eventually(t, 2*rolloutDeadline, fmt.Sprintf("rollout %s", phase), func() (bool, string) {
		if err := hub.Get(t.Context(), key, &rb); err != nil {
			return false, err.Error()
		}
		st := rb.Status.Rollout
		if st == nil {
			return false, "no status.rollout"
		}
		return st.Revision != old && st.Phase == phase, fmt.Sprintf("revision %s phase %s reason %s: %s", st.Revision, st.Phase, st.Reason, st.Message)
	})
	return &rb
}

// assertStagedAfterBake checks, from the members' own timestamps, that
// flotilla wrote image to the rest only after the canary's pods of it were
// all Ready (the Deployment cannot be Healthy before) and the bake time had
// passed. Timestamps are in whole seconds, rounded down, so the bound holds
// exactly.
func assertStagedAfterBake(t *testing.T, env controllertest.Fleet, canary string, rest []string, image string) {
	t.Helper()
	var ready time.Time
	testkit.Eventually(t, rolloutDeadline, "every member rolled out "+image, func() (bool, string) {
		for _, c := range append([]string{canary}, rest...) {
			d := memberDeployment(t, env, c)
			if d == nil || d.Spec.Template.Spec.Containers[0].Image != image || rolledOutAt(d).IsZero() {
				return false, c + " not rolled out yet"
			}
		}
		var msg string
		ready, msg = podsReadyAt(t, env, canary, image)
		return !ready.IsZero(), msg
	})
	for _, c := range rest {
		wrote := flotillaWriteTime(memberDeployment(t, env, c))
		if wrote.Before(ready.Add(rolloutBake * time.Second)) {
			t.Errorf("flotilla wrote %s to %s at %v, before the canary's pods were Ready (%v) plus the %ds bake", image, c, wrote, ready, rolloutBake)
		}
		t.Logf("%s: canary %s pods Ready at %s, flotilla wrote %s at %s (bake %ds)", image, canary, ready.Format(time.TimeOnly), c, wrote.Format(time.TimeOnly), rolloutBake)
	}
}

// assertStageRecords checks the binding's record of a completed rollout:
// each stage started once the one before passed, and the canary passed no
// sooner than its bake after it became healthy.
func assertStageRecords(t *testing.T, rb *workv1.ResourceBinding) {
	t.Helper()
	s := rb.Status.Rollout.Stages
	if len(s) != 2 || s[0].Name != "canary" || s[1].Name != "rest" || s[0].PassTime == nil || s[0].HealthyTime == nil || s[1].StartTime == nil {
		t.Fatalf("stage records %+v", s)
	}
	if s[1].StartTime.Before(s[0].PassTime) {
		t.Errorf("stage rest started at %v, before the canary passed at %v", s[1].StartTime, s[0].PassTime)
	}
	if s[0].PassTime.Sub(s[0].HealthyTime.Time) < rolloutBake*time.Second {
		t.Errorf("the canary passed at %v, less than %ds after it became healthy at %v", s[0].PassTime, rolloutBake, s[0].HealthyTime)
	}
}

// rolledOutAt is when a Deployment's controller finished rolling out its
// current generation (Progressing: NewReplicaSetAvailable), zero before.
func rolledOutAt(d *appsv1.Deployment) time.Time {
	if d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != ptr.Deref(d.Spec.Replicas, 1) || d.Status.AvailableReplicas != d.Status.UpdatedReplicas {
		return time.Time{}
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionTrue && c.Reason == "NewReplicaSetAvailable" {
			return c.LastUpdateTime.Time
		}
	}
	return time.Time{}
}

// podsReadyAt is when the last of a member's running pods of image became
// Ready (zero, and why, while one is not).
func podsReadyAt(t *testing.T, env controllertest.Fleet, cluster, image string) (time.Time, string) {
	t.Helper()
	var pods corev1.PodList
	if err := env.Members[cluster].List(t.Context(), &pods, client.InNamespace("default"), client.MatchingLabels{"app": "web"}); err != nil {
		return time.Time{}, err.Error()
	}
	var last time.Time
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Spec.Containers[0].Image != image {
			continue
		}
		n++
		i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue })
		if i < 0 {
			return time.Time{}, fmt.Sprintf("pod %s of %s is not Ready", p.Name, cluster)
		}
		if at := p.Status.Conditions[i].LastTransitionTime.Time; at.After(last) {
			last = at
		}
	}
	if n == 0 {
		return time.Time{}, "no pod of " + image + " in " + cluster
	}
	return last, ""
}

// flotillaWriteTime is when flotilla last wrote the Deployment's spec.
func flotillaWriteTime(d *appsv1.Deployment) time.Time {
	var last time.Time
	for _, f := range d.ManagedFields {
		if f.Manager == execution.DefaultFieldManager && f.Subresource == "" && f.Time != nil && f.Time.After(last) {
			last = f.Time.Time
		}
	}
	return last
}

func memberDeployment(t *testing.T, env controllertest.Fleet, cluster string) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := env.Members[cluster].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		return nil
	}
	return &d
}

func memberImage(t *testing.T, env controllertest.Fleet, cluster string) string {
	t.Helper()
	if d := memberDeployment(t, env, cluster); d != nil {
		return d.Spec.Template.Spec.Containers[0].Image
	}
	return "<none>"
}

// memberVersions are the members' Deployments' generations: a write to
// the spec moves one.
func memberVersions(t *testing.T, env controllertest.Fleet, clusters []string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, c := range clusters {
		if d := memberDeployment(t, env, c); d != nil {
			out[c] = d.Generation
		}
	}
	return out
}

func fullyAppliedOf(rb *workv1.ResourceBinding) *metav1.Condition {
	for i := range rb.Status.Conditions {
		if rb.Status.Conditions[i].Type == api.ConditionFullyApplied {
			return &rb.Status.Conditions[i]
		}
	}
	return nil
}
