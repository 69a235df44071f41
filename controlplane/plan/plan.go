// Package plan is the engine's pure planning step. For a fleet snapshot and a
// set of resource templates it decides, per template, which propagation
// policy claims it, which clusters get how many replicas, and the exact
// object each cluster receives. `terraform plan`, `preview` and the
// synchronous driver all call it, so what is shown is what is applied.
//
// It does no I/O and reads no clock; it must not import client libraries.
package plan

import (
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// Fleet is the snapshot a plan is made over.
type Fleet struct {
	// Name is the fleet name written into every rendered object's ownership labels.
	Name string
	// Clusters are the members, with whatever status is known.
	Clusters []api.Cluster
	// PropagationPolicies are the namespaced propagation policies.
	PropagationPolicies []api.PropagationPolicy
	// ClusterPropagationPolicies are the cluster-wide propagation policies.
	ClusterPropagationPolicies []api.ClusterPropagationPolicy
	// OverridePolicies are the namespaced override policies.
	OverridePolicies []api.OverridePolicy
	// ClusterOverridePolicies are the cluster-wide override policies.
	ClusterOverridePolicies []api.ClusterOverridePolicy
	// Bindings are the previous scheduling results, matched to templates by
	// spec.resource; they make placements sticky and scaling steady, and
	// the claim their Karmada annotations record sticky
	// (policy.BindingClaim, policy.ResolveClaim).
	Bindings []api.ResourceBinding
	// Quotas are the FederatedResourceQuotas the plan respects: a static
	// assignment caps what dynamic division gives its cluster, and a
	// template whose replicas would take its namespace over a quota's
	// overall limit is refused with the numbers.
	Quotas []api.FederatedResourceQuota
	// Interpreter interprets the templates' kinds: the built-in table
	// extended by the fleet's ResourceInterpreterCustomizations (nil for
	// the built-in table only).
	Interpreter *interpret.Interpreter
	// NodeEstimates is the per-node estimator over the members whose nodes
	// were read (scheduler.Binding.NodeEstimates); nil, as in preview, for
	// the general estimator alone.
	NodeEstimates scheduler.NodeEstimator
}

// FleetFromBundle takes the clusters, policies and bindings of a decoded bundle.
func FleetFromBundle(name string, b *api.Bundle) Fleet {
	return Fleet{
		Name:                       name,
		Clusters:                   b.Clusters,
		PropagationPolicies:        b.PropagationPolicies,
		ClusterPropagationPolicies: b.ClusterPropagationPolicies,
		OverridePolicies:           b.OverridePolicies,
		ClusterOverridePolicies:    b.ClusterOverridePolicies,
		Bindings:                   b.Bindings,
		Quotas:                     b.Quotas,
	}
}

// PolicyRef identifies the propagation policy that claims a template. A
// template's identity is api.TemplateRef; a policy is named by kind,
// namespace and name alone, as Karmada's claim labels name it.
type PolicyRef struct {
	// Kind is PropagationPolicy or ClusterPropagationPolicy.
	Kind string `json:"kind"`
	// Namespace is empty for a ClusterPropagationPolicy.
	Namespace string `json:"namespace,omitempty"`
	// Name is the policy's name.
	Name string `json:"name"`
}

// String is "PropagationPolicy <namespace>/<name>" or
// "ClusterPropagationPolicy <name>": the form of Terraform's policy
// attribute and of messages.
func (r PolicyRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Result is the plan for one template.
type Result struct {
	// Template is the planned template.
	Template api.TemplateRef
	// Policy is the claiming propagation policy; nil when none claims it.
	Policy *PolicyRef
	// AffinityTerm is the chosen clusterAffinities term, if the policy has terms.
	AffinityTerm string
	// Components are the template's components when its kind scripts
	// componentResource: it is then placed whole, never divided, and each
	// cluster of Placement runs every component.
	Components []api.Component
	// Placement is cluster → replicas, sorted by cluster name. Empty when
	// unclaimed or unschedulable.
	Placement []api.TargetCluster
	// Works holds, per cluster of Placement, the exact object that cluster
	// receives, with the overrides that shaped it and its hash.
	Works map[string]render.Work
	// RequiredBy lists the workloads this template follows (propagateDeps).
	RequiredBy []api.TemplateRef
	// PreserveResourcesOnDeletion is the claiming policy's setting.
	PreserveResourcesOnDeletion bool
	// ConflictResolution is the claiming policy's setting (Abort or Overwrite).
	ConflictResolution api.ConflictResolution
	// Suspended lists the clusters of Placement the claiming policy's
	// suspension holds back: they are scheduled and rendered (Works has
	// them) but nothing is dispatched to them, as Karmada writes their
	// Works with spec.suspendDispatching. Sorted. Dependencies that follow
	// a workload are not held back, as Karmada's attached bindings carry
	// no suspension.
	Suspended []string
	// Rollout is the claiming policy's staged rollout; nil when it has none
	// (every cluster updates at once).
	Rollout *api.RolloutStrategy
	// Stages are Placement's clusters assigned to Rollout's stages
	// (policy.AssignStages), in order; nil without a rollout.
	Stages []policy.Stage
	// Err says why the template could not be planned; nil on success.
	Err error
	// Reasons says, per cluster, why it was not chosen.
	Reasons map[string]string
	// NodeLimited lists the placed clusters whose nodes hold fewer
	// replicas than their cluster-wide free resources would allow (with
	// Fleet.NodeEstimates).
	NodeLimited []scheduler.NodeLimit
}

// Plan plans every template against the fleet. Results come in template
// order. A template no policy claims gets an empty placement and no error.
// Templates that a claimed workload with propagateDeps refers to (ConfigMaps,
// Secrets, ServiceAccounts, PVCs in its namespace) follow that workload's
// clusters, in addition to any placement of their own.
func Plan(f Fleet, templates []*unstructured.Unstructured) []Result {
	clusters := make([]*api.Cluster, len(f.Clusters))
	byName := make(map[string]*api.Cluster, len(f.Clusters))
	for i := range f.Clusters {
		clusters[i] = &f.Clusters[i]
		byName[f.Clusters[i].Name] = &f.Clusters[i]
	}
	// One template is scheduled over the clusters as they are; several share
	// a snapshot, whose per-cluster figures are worked out once. Measured
	// at 5,000 clusters (BenchmarkKarmadaSideBySide, fresh minus shared,
	// CPU time), building one and its per-kind and per-affinity caches
	// costs about one decision without it for dynamic weights and
	// Aggregated (0.8-1.25) and two for Duplicated and static weights
	// (2-2.6), and a decision over it an eighth to a half of one without
	// it: it pays from the second or third template, not for one.
	decide := func(b scheduler.Binding) (scheduler.Result, error) { return scheduler.Schedule(clusters, b) }
	if len(templates) > 1 {
		decide = scheduler.NewSnapshot(clusters).Schedule
	}
	results := make([]Result, len(templates))
	specs := make([]*api.PropagationSpec, len(templates))
	ledger := newQuotaLedger(f, templates)
	for i, tmpl := range templates {
		results[i], specs[i] = schedule(f, decide, tmpl, ledger)
	}
	followDependencies(f.Interpreter, templates, results, specs)
	for i, tmpl := range templates {
		if results[i].Err != nil || len(results[i].Placement) == 0 {
			continue
		}
		works, err := renderTemplate(f, byName, tmpl, specs[i], &results[i])
		if err != nil {
			results[i].Err = fmt.Errorf("%s: %w", results[i].Template.Describe(), err)
			continue
		}
		results[i].Works = works
		if err := stageResult(&results[i], specs[i], byName); err != nil {
			results[i].Err = fmt.Errorf("%s: %w", results[i].Template.Describe(), err)
		}
	}
	return results
}

// schedule claims one template and schedules it with decide, within the
// quotas of its namespace as ledger counts them.
func schedule(f Fleet, decide func(scheduler.Binding) (scheduler.Result, error), tmpl *unstructured.Unstructured, ledger *quotaLedger) (Result, *api.PropagationSpec) {
	res := Result{Template: api.TemplateRefOf(tmpl)}
	prev := previousBinding(f.Bindings, res.Template)
	// The previous result's claim is sticky, as in the continuous driver,
	// so preemption means the same in every front end.
	claim, ok := policy.ResolveClaim(tmpl, policy.BindingClaim(prev), f.PropagationPolicies, f.ClusterPropagationPolicies)
	if !ok {
		return res, nil
	}
	res.Policy = &PolicyRef{Kind: claim.Kind, Namespace: claim.Namespace, Name: claim.Name}
	spec := claim.Spec
	if err := refuseClaim(f, claim, *res.Policy); err != nil {
		res.Err = fmt.Errorf("%s: %w", res.Template.Describe(), err)
		return res, spec
	}
	res.ConflictResolution = spec.ConflictResolution
	res.PreserveResourcesOnDeletion = spec.PreserveResourcesOnDeletion != nil && *spec.PreserveResourcesOnDeletion
	replicas, req, comps, err := f.Interpreter.Workload(tmpl)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", res.Template.Describe(), err)
		return res, spec
	}
	res.Components = comps
	b := scheduler.Binding{
		Resource:            api.ObjectReference{APIVersion: tmpl.GetAPIVersion(), Kind: tmpl.GetKind(), Namespace: tmpl.GetNamespace(), Name: tmpl.GetName(), UID: tmpl.GetUID()},
		Replicas:            replicas,
		ReplicaRequirements: req,
		Components:          comps,
		Placement:           spec.Placement,
	}
	if prev != nil {
		b = scheduler.BindingFor(prev, spec.Placement)
		b.Resource.UID = tmpl.GetUID()
		b.Replicas, b.ReplicaRequirements, b.Components = replicas, req, comps
	}
	b.Policy = scheduler.DescribePolicy(claim.Kind, claim.Namespace, claim.Name)
	quota := ledger.view(tmpl.GetNamespace())
	var previous *api.ResourceBindingSpec
	if prev != nil {
		previous = &prev.Spec
	}
	b.QuotaRoom = quota.Room(&api.ResourceBindingSpec{ReplicaRequirements: req, Clusters: b.Previous})
	b.NodeEstimates = f.NodeEstimates
	out, err := decide(b)
	res.AffinityTerm, res.Reasons, res.NodeLimited = out.AffinityName, out.Reasons.Map(), out.NodeLimited
	if err == nil {
		next := api.ResourceBindingSpec{ReplicaRequirements: req, Components: comps, Clusters: out.Clusters}
		if over := quota.ExceededBy(previous, &next); over != "" {
			res.Err = &QuotaError{Template: res.Template.Describe(), Excess: over}
			return res, spec
		}
		ledger.record(tmpl.GetNamespace(), next)
	}
	if err != nil {
		res.Err = err
		var fit *scheduler.FitError
		if errors.As(err, &fit) {
			res.Reasons, res.AffinityTerm = fit.Reasons, fit.AffinityName
		}
		return res, spec
	}
	res.Placement = out.Clusters
	res.Suspended = suspendedClusters(spec.Suspension, out.Clusters)
	return res, spec
}

func previousBinding(bindings []api.ResourceBinding, ref api.TemplateRef) *api.ResourceBinding {
	for i := range bindings {
		if api.TemplateRefOfResource(bindings[i].Spec.Resource) == ref {
			return &bindings[i]
		}
	}
	return nil
}

// followDependencies adds, to each template that a claimed workload with
// propagateDeps refers to, the clusters of that workload.
func followDependencies(in *interpret.Interpreter, templates []*unstructured.Unstructured, results []Result, specs []*api.PropagationSpec) {
	index := make(map[interpret.Dependency]int, len(templates))
	for i, t := range templates {
		if t.GetAPIVersion() == "v1" {
			index[interpret.Dependency{Kind: t.GetKind(), Namespace: t.GetNamespace(), Name: t.GetName()}] = i
		}
	}
	for i, tmpl := range templates {
		if specs[i] == nil || !specs[i].PropagateDeps || results[i].Err != nil || len(results[i].Placement) == 0 {
			continue
		}
		deps, err := in.GetDependencies(tmpl)
		if err != nil {
			results[i].Err = fmt.Errorf("%s: dependencies: %w", results[i].Template.Describe(), err)
			results[i].Placement = nil
			continue
		}
		for _, d := range deps {
			j, ok := index[d]
			if !ok || results[j].Err != nil {
				continue
			}
			results[j].RequiredBy = append(results[j].RequiredBy, results[i].Template)
			results[j].Placement = unionClusters(results[j].Placement, results[i].Placement)
			if specs[j] == nil {
				// An unclaimed dependent inherits the workload's deletion and conflict behaviour.
				results[j].ConflictResolution = results[i].ConflictResolution
				results[j].PreserveResourcesOnDeletion = results[i].PreserveResourcesOnDeletion
			}
		}
	}
}

// unionClusters merges two placements by cluster name. Dependents carry no
// replicas, so only names matter.
func unionClusters(a, b []api.TargetCluster) []api.TargetCluster {
	seen := make(map[string]bool, len(a)+len(b))
	var out []api.TargetCluster
	for _, tc := range append(append([]api.TargetCluster{}, a...), b...) {
		if !seen[tc.Name] {
			seen[tc.Name] = true
			out = append(out, api.TargetCluster{Name: tc.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// renderTemplate renders a planned template (RenderBinding) as the binding
// the continuous driver would write for it.
func renderTemplate(f Fleet, byName map[string]*api.Cluster, tmpl *unstructured.Unstructured, spec *api.PropagationSpec, res *Result) (map[string]render.Work, error) {
	// A previous binding under failover carries preserved state to its
	// new cluster, as the continuous driver renders it.
	binding := api.ResourceBindingSpec{Clusters: res.Placement, Components: res.Components}
	if prev := previousBinding(f.Bindings, api.TemplateRefOf(tmpl)); prev != nil {
		binding.GracefulEvictionTasks = prev.Spec.GracefulEvictionTasks
	}
	if spec != nil {
		binding.Placement = &spec.Placement
	}
	return RenderBinding(BindingInput{
		Template: tmpl,
		Binding:  &binding,
		Cluster: func(name string) (*api.Cluster, error) {
			c, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("placement names unknown cluster %q", name)
			}
			return c, nil
		},
		OverridePolicies:        f.OverridePolicies,
		ClusterOverridePolicies: f.ClusterOverridePolicies,
		Fleet:                   f.Name,
		Interpreter:             f.Interpreter,
	})
}

// stageResult assigns a planned template's clusters to the claiming
// policy's rollout stages. A dependency that follows a workload is not
// staged by the workload's rollout: it has no health of its own to gate.
func stageResult(res *Result, spec *api.PropagationSpec, byName map[string]*api.Cluster) error {
	if spec == nil || spec.Rollout == nil {
		return nil
	}
	names := make([]string, len(res.Placement))
	for i, tc := range res.Placement {
		names[i] = tc.Name
	}
	stages, err := policy.AssignStages(spec.Rollout, names, byName)
	if err != nil {
		return err
	}
	res.Rollout, res.Stages = spec.Rollout, stages
	return nil
}

// QuotaError is a plan refused because its placement would take the
// template's namespace over a FederatedResourceQuota's overall limit: a
// placement question, like a scheduler.FitError, not a bad input.
type QuotaError struct {
	// Template describes the template, e.g. "Deployment shop/web".
	Template string
	// Excess names the quota and the numbers, e.g. "FederatedResourceQuota
	// shop/shop: cpu: 2500m requested, 0 used of 2".
	Excess string
}

func (e *QuotaError) Error() string {
	return e.Template + ": the template's replicas would exceed " + e.Excess
}
