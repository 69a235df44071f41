package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func TestValidateRollout(t *testing.T) {
	const (
		req  = "Required value"
		inv  = "Invalid value"
		uns  = "Unsupported value"
		dup  = "Duplicate value"
		many = "Too many"
	)
	aff := apitest.MakeAffinity
	canary := func() *apitest.RolloutWrapper {
		return apitest.MakeRollout().Stage("canary", aff().Names("east").Obj())
	}
	cases := map[string]struct {
		rollout *api.RolloutStrategy
		want    []string
	}{
		"one stage with defaults": {rollout: canary().Obj()},
		"canary, batched rest and every knob": {
			rollout: canary().Gate(30, 0, 120).Stage("rest", nil).Batch(2).Gate(0, 1, 0).OnGateFailure(api.RolloutRollback).Obj(),
		},
		"Halt spelled out": {rollout: canary().OnGateFailure(api.RolloutHalt).Obj()},
		"stages required": {
			rollout: apitest.MakeRollout().Obj(),
			want:    []string{"spec.rollout.stages: " + req},
		},
		"at most ten stages": {
			rollout: func() *api.RolloutStrategy {
				w := apitest.MakeRollout()
				for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"} {
					w.Stage(n, aff().Names(n).Obj())
				}
				return w.Obj()
			}(),
			want: []string{"spec.rollout.stages: " + many},
		},
		"names required, DNS labels, unique, not the implicit one": {
			rollout: apitest.MakeRollout().Stage("", aff().Names("a").Obj()).Stage("Canary_1", aff().Names("b").Obj()).
				Stage("wave", aff().Names("c").Obj()).Stage("wave", aff().Names("d").Obj()).Stage(api.RemainingStageName, nil).Obj(),
			want: []string{
				"spec.rollout.stages[0].name: " + req,
				"spec.rollout.stages[1].name: " + inv,
				"spec.rollout.stages[3].name: " + dup,
				"spec.rollout.stages[4].name: " + inv,
			},
		},
		"only the last stage may take the rest": {
			rollout: apitest.MakeRollout().Stage("first", nil).Stage("second", aff().Names("b").Obj()).Obj(),
			want:    []string{"spec.rollout.stages[0].clusterAffinity: " + req},
		},
		"stage affinity is validated like placement's": {
			rollout: apitest.MakeRollout().Stage("canary", aff().Names("").LabelExpression("tier", "Near", "x").Obj()).Obj(),
			want: []string{
				"spec.rollout.stages[0].clusterAffinity.labelSelector.matchExpressions[0].operator: " + inv,
				"spec.rollout.stages[0].clusterAffinity.clusterNames[0]: " + req,
			},
		},
		"bounds": {
			rollout: canary().Batch(0).Gate(-1, -1, -5).Obj(),
			want: []string{
				"spec.rollout.stages[0].maxConcurrentClusters: " + inv,
				"spec.rollout.stages[0].gate.bakeSeconds: " + inv,
				"spec.rollout.stages[0].gate.maxUnhealthyClusters: " + inv,
				"spec.rollout.stages[0].gate.timeoutSeconds: " + inv,
			},
		},
		"timeout of 0 is refused when set": {
			rollout: func() *api.RolloutStrategy {
				r := canary().Obj()
				zero := int32(0)
				r.Stages[0].Gate = &api.RolloutGate{TimeoutSeconds: &zero}
				return r
			}(),
			want: []string{"spec.rollout.stages[0].gate.timeoutSeconds: " + inv},
		},
		"onGateFailure enum": {
			rollout: canary().OnGateFailure("Pause").Obj(),
			want:    []string{"spec.rollout.onGateFailure: " + uns},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := web().Rollout(tc.rollout).Obj()
			if diff := cmp.Diff(tc.want, paths(api.ValidatePropagationPolicy(p))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			// The cluster-wide kind shares the spec and so the rules.
			if diff := cmp.Diff(tc.want, paths(api.ValidateClusterPropagationPolicy(web().Rollout(tc.rollout).ClusterObj()))); diff != "" {
				t.Errorf("cluster-wide errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRolloutDefaults(t *testing.T) {
	var nilGate *api.RolloutGate
	if nilGate.Timeout().Seconds() != float64(api.DefaultGateTimeoutSeconds) || nilGate.Bake() != 0 || nilGate.MaxUnhealthy() != 0 {
		t.Errorf("nil gate: timeout %s, bake %s, max unhealthy %d", nilGate.Timeout(), nilGate.Bake(), nilGate.MaxUnhealthy())
	}
	g := apitest.MakeRollout().Stage("a", nil).Gate(7, 2, 9).Obj().Stages[0].Gate
	if g.Timeout().Seconds() != 9 || g.Bake().Seconds() != 7 || g.MaxUnhealthy() != 2 {
		t.Errorf("gate: timeout %s, bake %s, max unhealthy %d", g.Timeout(), g.Bake(), g.MaxUnhealthy())
	}
	var none *api.RolloutStrategy
	if none.FailureAction() != api.RolloutHalt || (&api.RolloutStrategy{OnGateFailure: api.RolloutRollback}).FailureAction() != api.RolloutRollback {
		t.Error("failure action defaults to Halt and keeps Rollback")
	}
}
