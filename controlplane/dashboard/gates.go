package dashboard

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// gates looks up, for the rollouts page, the gate of each binding's
// current stage in the policy that claims it, read from the cache. The
// gate's times are the policy's: they are shown only to a user who may
// get that policy. Each policy is read once per request.
func (s *Server) gates(r *http.Request, u user.Info) gateLookup {
	type key struct{ ns, kind, name string }
	strategies := map[key]*api.RolloutStrategy{}
	known := map[key]bool{}
	return func(rb *workv1.ResourceBinding) (*api.RolloutGate, bool) {
		ref, ok := policy.ParseClaimRef(rb.Labels[hoststore.LabelPolicy])
		if !ok || rb.Status.Rollout == nil {
			return nil, false
		}
		k := key{kind: ref.Kind, name: ref.Name}
		if ref.Kind == api.KindPropagationPolicy {
			// A PropagationPolicy claims templates of its own namespace,
			// where their bindings are.
			k.ns = rb.Namespace
		}
		if _, done := known[k]; !done {
			strategies[k], known[k] = s.strategy(r, u, k.ns, k.kind, k.name)
		}
		if !known[k] || strategies[k] == nil {
			return nil, false
		}
		return stageGate(strategies[k], rb.Status.Rollout)
	}
}

// strategy is the rollout of the named policy; false when u may not get
// it or the cache has none.
func (s *Server) strategy(r *http.Request, u user.Info, ns, policyKind, name string) (*api.RolloutStrategy, bool) {
	var obj client.Object
	res := kind{policyv1.GroupVersion.Group, "propagationpolicies"}
	switch policyKind {
	case api.KindPropagationPolicy:
		obj = &policyv1.PropagationPolicy{}
	case api.KindClusterPropagationPolicy:
		obj, res.name = &policyv1.ClusterPropagationPolicy{}, "clusterpropagationpolicies"
	default:
		return nil, false
	}
	if !s.access.canGet(r.Context(), u, res, ns, name) {
		return nil, false
	}
	if err := s.reader.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return nil, false
	}
	switch p := obj.(type) {
	case *policyv1.PropagationPolicy:
		return p.Spec.Rollout, true
	case *policyv1.ClusterPropagationPolicy:
		return p.Spec.Rollout, true
	}
	return nil, false
}

// stageGate is the gate of the rollout's current stage in strategy: the
// stage at the status' index, or the implicit last stage's default gate
// (nil); false when the strategy's stages no longer match the status (the
// policy changed since the binding controller last looked).
func stageGate(strategy *api.RolloutStrategy, ro *api.BindingRolloutStatus) (*api.RolloutGate, bool) {
	i := int(ro.StageIndex)
	switch {
	case i < len(strategy.Stages) && strategy.Stages[i].Name == ro.Stage:
		return strategy.Stages[i].Gate, true
	case i == len(strategy.Stages) && ro.Stage == api.RemainingStageName:
		return nil, true
	}
	return nil, false
}
