package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// placementDiffs plans every surveyed binding with flotilla's own planner
// (controlplane/plan, as `preview` does) over the host's Clusters, the
// policies that may claim its template, the template itself and the
// binding as the previous result, which is what the control plane's
// scheduler starts from after the take-over; and returns, by binding
// (hoststore.BindingRef), how flotilla's placement differs from Karmada's
// spec.clusters. A binding absent from the result is placed the same.
//
// Bindings are planned namespace by namespace, all of a namespace at once,
// so a dependency that follows its workload (propagateDeps) is planned
// with it, as the control plane plans it.
func (s *karmadaSurvey) placementDiffs(ctx context.Context, clusters []api.Cluster, bindings []*workv1.ResourceBinding) (map[string]string, error) {
	interpreter, err := hoststore.LoadInterpreter(ctx, s.host)
	if err != nil {
		return nil, err
	}
	byNamespace := map[string][]*workv1.ResourceBinding{}
	for _, rb := range bindings {
		byNamespace[rb.Namespace] = append(byNamespace[rb.Namespace], rb)
	}
	out := map[string]string{}
	for ns, rbs := range byNamespace {
		pps, cpps, _, err := hoststore.PropagationPolicies(ctx, s.host, ns)
		if err != nil {
			return nil, err
		}
		ops, cops, _, err := hoststore.OverridePolicies(ctx, s.host, ns)
		if err != nil {
			return nil, err
		}
		// The fleet's name is written into rendered objects only; it
		// does not move a placement.
		fleet := plan.Fleet{
			Name: shared.DefaultFleet, Clusters: clusters, Interpreter: interpreter,
			PropagationPolicies: pps, ClusterPropagationPolicies: cpps, OverridePolicies: ops, ClusterOverridePolicies: cops,
		}
		var templates []*unstructured.Unstructured
		var planned []*workv1.ResourceBinding
		for _, rb := range rbs {
			tmpl, err := hoststore.ReadTemplate(ctx, s.host, rb)
			if err != nil {
				return nil, err
			}
			if tmpl == nil {
				out[hoststore.BindingRef(rb)] = fmt.Sprintf("flotilla would place it nowhere: its template %s is not on the host, so the control plane would delete the binding; Karmada placed %s (a deletion after the take-over)",
					api.TemplateRefOfResource(rb.Spec.Resource).Describe(), describePlacement(rb.Spec.Clusters))
				continue
			}
			templates = append(templates, tmpl)
			planned = append(planned, rb)
			fleet.Bindings = append(fleet.Bindings, rb.Engine())
		}
		for i, r := range plan.Plan(fleet, templates) {
			if diff := placementDifference(planned[i].Spec.Clusters, r); diff != "" {
				out[hoststore.BindingRef(planned[i])] = diff
			}
		}
	}
	return out, nil
}

// placementDifference compares flotilla's plan of a template with the
// clusters Karmada's scheduler wrote on its binding: the same cluster set
// with the same replicas per cluster is no difference (""); anything else
// is said in one sentence naming both placements. A template flotilla
// cannot plan, or no policy claims for it, is a difference too: the
// control plane would not keep Karmada's placement for it either.
func placementDifference(karmada []api.TargetCluster, r plan.Result) string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("flotilla could not plan it (%v); Karmada placed %s (what the control plane places after the take-over is unknown)", r.Err, describePlacement(karmada))
	case r.Policy == nil && len(r.RequiredBy) == 0:
		return fmt.Sprintf("flotilla would place it nowhere: no propagation policy claims the template, so the control plane would delete the binding; Karmada placed %s (a deletion after the take-over)", describePlacement(karmada))
	}
	if samePlacement(karmada, r.Placement) {
		return ""
	}
	return fmt.Sprintf("flotilla would place %s; Karmada placed %s (a rollout after the take-over)", describePlacement(r.Placement), describePlacement(karmada))
}

// samePlacement reports whether two placements name the same clusters
// with the same replicas each, in any order. A cluster listed twice is a
// difference: it is not a placement the scheduler would write.
func samePlacement(a, b []api.TargetCluster) bool {
	if len(a) != len(b) {
		return false
	}
	replicas := make(map[string]int32, len(a))
	for _, tc := range a {
		if _, dup := replicas[tc.Name]; dup {
			return false
		}
		replicas[tc.Name] = tc.Replicas
	}
	for _, tc := range b {
		r, ok := replicas[tc.Name]
		if !ok || r != tc.Replicas {
			return false
		}
		delete(replicas, tc.Name)
	}
	return true
}

// describePlacement is "member1=2,member2=1" by cluster name; a cluster
// without replicas (a ConfigMap's, a ClusterRole's) is named alone.
func describePlacement(p []api.TargetCluster) string {
	if len(p) == 0 {
		return "no cluster"
	}
	sorted := slices.Clone(p)
	slices.SortStableFunc(sorted, func(a, b api.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	parts := make([]string, len(sorted))
	for i, tc := range sorted {
		parts[i] = tc.Name
		if tc.Replicas != 0 {
			parts[i] = fmt.Sprintf("%s=%d", tc.Name, tc.Replicas)
		}
	}
	return strings.Join(parts, ",")
}
