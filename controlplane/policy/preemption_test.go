package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// TestResolveClaim follows Karmada's pkg/detector: policy.go
// (propagateResource keeps a claimed template with its policy) and
// preemption.go (preemptPropagationPolicy,
// preemptClusterPropagationPolicyDirectly, preemptClusterPropagationPolicy).
func TestResolveClaim(t *testing.T) {
	pp := apitest.MakePropagationPolicy
	cpp := apitest.MakeClusterPropagationPolicy
	deploy := apitest.MakeDeployment("web", "prod").Label("app", "web").Obj()
	const d, v = "Deployment", "apps/v1"
	held := func(kind, name string) *policy.ClaimRef { return &policy.ClaimRef{Kind: kind, Name: name} }
	PP, CPP := api.KindPropagationPolicy, api.KindClusterPropagationPolicy
	cases := map[string]struct {
		prev *policy.ClaimRef
		pps  []api.PropagationPolicy
		cpps []api.ClusterPropagationPolicy
		want *claimID
	}{
		"no previous claim: the best policy": {
			pps:  pps(pp("low", "prod").SelectKind(v, d).Priority(1), pp("high", "prod").SelectKind(v, d).Priority(5)),
			want: &claimID{PP, "prod", "high", policy.MatchKind},
		},
		"a claim is sticky against a higher priority without preemption": {
			prev: held(PP, "low"),
			pps:  pps(pp("low", "prod").SelectKind(v, d).Priority(1), pp("high", "prod").SelectName(v, d, "web").Priority(5)),
			want: &claimID{PP, "prod", "low", policy.MatchKind},
		},
		"preemption Always with a higher priority takes the template": {
			prev: held(PP, "low"),
			pps:  pps(pp("low", "prod").SelectKind(v, d).Priority(1), pp("high", "prod").SelectName(v, d, "web").Priority(5).Preemption(api.PreemptAlways)),
			want: &claimID{PP, "prod", "high", policy.MatchName},
		},
		"preemption Always with an equal priority does not": {
			prev: held(PP, "low"),
			pps:  pps(pp("low", "prod").SelectKind(v, d).Priority(5), pp("same", "prod").SelectName(v, d, "web").Priority(5).Preemption(api.PreemptAlways)),
			want: &claimID{PP, "prod", "low", policy.MatchKind},
		},
		"preemption Always with a lower priority does not": {
			prev: held(PP, "low"),
			pps:  pps(pp("low", "prod").SelectKind(v, d).Priority(5), pp("lower", "prod").SelectName(v, d, "web").Priority(1).Preemption(api.PreemptAlways)),
			want: &claimID{PP, "prod", "low", policy.MatchKind},
		},
		"a preemptor must select the template": {
			prev: held(PP, "low"),
			pps:  pps(pp("low", "prod").SelectKind(v, d), pp("other", "prod").SelectName(v, d, "api").Priority(9).Preemption(api.PreemptAlways)),
			want: &claimID{PP, "prod", "low", policy.MatchKind},
		},
		"several preemptors: the highest priority wins": {
			prev: held(PP, "low"),
			pps: pps(pp("low", "prod").SelectKind(v, d),
				pp("a", "prod").SelectName(v, d, "web").Priority(3).Preemption(api.PreemptAlways),
				pp("b", "prod").SelectName(v, d, "web").Priority(7).Preemption(api.PreemptAlways)),
			want: &claimID{PP, "prod", "b", policy.MatchName},
		},
		"a namespaced preemptor takes a cluster-wide claim whatever the priority": {
			prev: held(CPP, "fleet"),
			pps:  pps(pp("mine", "prod").SelectName(v, d, "web").Priority(-5).Preemption(api.PreemptAlways)),
			cpps: cpps(cpp("fleet").SelectKind(v, d).Priority(100)),
			want: &claimID{PP, "prod", "mine", policy.MatchName},
		},
		"a namespaced policy without preemption leaves a cluster-wide claim": {
			prev: held(CPP, "fleet"),
			pps:  pps(pp("mine", "prod").SelectName(v, d, "web").Priority(100)),
			cpps: cpps(cpp("fleet").SelectKind(v, d)),
			want: &claimID{CPP, "", "fleet", policy.MatchKind},
		},
		"a cluster-wide preemptor with a higher priority takes a cluster-wide claim": {
			prev: held(CPP, "fleet"),
			cpps: cpps(cpp("fleet").SelectKind(v, d).Priority(1), cpp("urgent").SelectName(v, d, "web").Priority(2).Preemption(api.PreemptAlways)),
			want: &claimID{CPP, "", "urgent", policy.MatchName},
		},
		"a cluster-wide preemptor never takes a namespaced claim": {
			prev: held(PP, "mine"),
			pps:  pps(pp("mine", "prod").SelectKind(v, d)),
			cpps: cpps(cpp("urgent").SelectName(v, d, "web").Priority(100).Preemption(api.PreemptAlways)),
			want: &claimID{PP, "prod", "mine", policy.MatchKind},
		},
		"the claiming policy deleted: the best remaining one": {
			prev: held(PP, "gone"),
			pps:  pps(pp("b", "prod").SelectKind(v, d), pp("a", "prod").SelectKind(v, d)),
			want: &claimID{PP, "prod", "a", policy.MatchKind},
		},
		"the claiming policy being deleted: the best remaining one": {
			prev: held(PP, "going"),
			pps:  pps(pp("going", "prod").SelectName(v, d, "web").Priority(9).Deleting(), pp("b", "prod").SelectKind(v, d)),
			want: &claimID{PP, "prod", "b", policy.MatchKind},
		},
		"the claiming policy no longer selects the template: the best remaining one": {
			prev: held(PP, "moved"),
			pps:  pps(pp("moved", "prod").SelectName(v, d, "api").Priority(9), pp("b", "prod").SelectKind(v, d)),
			want: &claimID{PP, "prod", "b", policy.MatchKind},
		},
		"a namespaced claim from another namespace is no claim": {
			prev: held(PP, "elsewhere"),
			pps:  pps(pp("elsewhere", "dev").SelectKind(v, d), pp("here", "prod").SelectKind(v, d)),
			want: &claimID{PP, "prod", "here", policy.MatchKind},
		},
		"nothing selects the template any more": {
			prev: held(CPP, "fleet"),
			cpps: cpps(cpp("fleet").SelectKind("v1", "ConfigMap")),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			claim, ok := policy.ResolveClaim(deploy, tc.prev, tc.pps, tc.cpps)
			var got *claimID
			if ok {
				got = &claimID{claim.Kind, claim.Namespace, claim.Name, claim.Specificity}
				if claim.Spec == nil {
					t.Error("claim has no spec")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("claim (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseClaimRef(t *testing.T) {
	cases := map[string]*policy.ClaimRef{
		"PropagationPolicy.web":            {Kind: api.KindPropagationPolicy, Name: "web"},
		"ClusterPropagationPolicy.a.b":     {Kind: api.KindClusterPropagationPolicy, Name: "a.b"},
		"OverridePolicy.web":               nil,
		"PropagationPolicy.":               nil,
		"PropagationPolicy":                nil,
		"":                                 nil,
		"ClusterPropagationPolicy.fleet-1": {Kind: api.KindClusterPropagationPolicy, Name: "fleet-1"},
	}
	for in, want := range cases {
		got, ok := policy.ParseClaimRef(in)
		if (want == nil) == ok || (ok && got != *want) {
			t.Errorf("ParseClaimRef(%q) = %+v, %v; want %+v", in, got, ok, want)
		}
		if ok && got.String() != in {
			t.Errorf("ParseClaimRef(%q).String() = %q", in, got.String())
		}
	}
}

func TestHeldLazily(t *testing.T) {
	lazy := &api.PropagationSpec{ActivationPreference: api.LazyActivation}
	eager := &api.PropagationSpec{}
	claim := func(spec *api.PropagationSpec) policy.Claim {
		return policy.Claim{Kind: api.KindPropagationPolicy, Namespace: "prod", Name: "web", Spec: spec}
	}
	same := &policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "web"}
	cases := map[string]struct {
		claim          policy.Claim
		prev           *policy.ClaimRef
		prevHash, hash string
		want           bool
	}{
		"lazy, same claim, template unchanged: held": {claim(lazy), same, "h1", "h1", true},
		"lazy, template changed: written":            {claim(lazy), same, "h1", "h2", false},
		"not lazy: written":                          {claim(eager), same, "h1", "h1", false},
		"new claim: written":                         {claim(lazy), &policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "old"}, "h1", "h1", false},
		"no binding yet: written":                    {claim(lazy), nil, "", "h1", false},
		"binding without a hash: written":            {claim(lazy), same, "", "h1", false},
	}
	for name, tc := range cases {
		if got := policy.HeldLazily(tc.claim, tc.prev, tc.prevHash, tc.hash); got != tc.want {
			t.Errorf("%s: HeldLazily = %v, want %v", name, got, tc.want)
		}
	}
}

func TestSpecificationHash(t *testing.T) {
	base := apitest.MakeDeployment("web", "prod").Label("app", "web").Obj()
	h0, err := policy.SpecificationHash(base)
	if err != nil {
		t.Fatal(err)
	}
	noise := base.DeepCopy()
	noise.SetResourceVersion("42")
	noise.SetGeneration(7)
	noise.Object["status"] = map[string]any{"readyReplicas": int64(3)}
	noise.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	if h, _ := policy.SpecificationHash(noise); h != h0 {
		t.Errorf("status, resourceVersion, generation or managedFields changed the hash")
	}
	for name, edit := range map[string]func(u *unstructured.Unstructured){
		"label": func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web", "tier": "x"}) },
		"spec": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(9), "spec", "replicas")
		},
		"annotate": func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) },
	} {
		u := base.DeepCopy()
		edit(u)
		if h, _ := policy.SpecificationHash(u); h == h0 {
			t.Errorf("a %s change left the hash alone", name)
		}
	}
}

func TestBindingClaim(t *testing.T) {
	rb := func(annotations map[string]string) *api.ResourceBinding {
		return &api.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
			Spec:       api.ResourceBindingSpec{Resource: api.ObjectReference{Namespace: "prod", Name: "web"}},
		}
	}
	cases := map[string]struct {
		rb   *api.ResourceBinding
		want *policy.ClaimRef
	}{
		"none":              {rb(nil), nil},
		"nil binding":       {nil, nil},
		"propagation":       {rb(map[string]string{policy.AnnotationClaimPolicyName: "web", policy.AnnotationClaimPolicyNamespace: "prod"}), &policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "web"}},
		"another namespace": {rb(map[string]string{policy.AnnotationClaimPolicyName: "web", policy.AnnotationClaimPolicyNamespace: "dev"}), nil},
		"cluster-wide":      {rb(map[string]string{policy.AnnotationClaimClusterPolicyName: "fleet"}), &policy.ClaimRef{Kind: api.KindClusterPropagationPolicy, Name: "fleet"}},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, policy.BindingClaim(tc.rb)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	round := rb(nil)
	policy.SetBindingClaim(round, policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "web"}, "prod")
	if got := policy.BindingClaim(round); got == nil || got.Name != "web" || got.Kind != api.KindPropagationPolicy {
		t.Errorf("SetBindingClaim then BindingClaim = %+v", got)
	}
}
