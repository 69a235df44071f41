package shared

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// A ResourceBinding is a namespaced object, and whoever may write objects
// in a namespace may be able to write one there. So nothing in a binding is
// taken on trust: the binding controller and the execution controller act
// only on a binding that the control plane itself would have written, and
// take every setting that reaches a member from the policy that claims the
// template now, not from the binding's copy. See "ResourceBindings are not
// trusted" in the design decisions guide.

// ValidateResourceBinding checks what a binding must be for flotilla to
// act on it, as far as the binding alone tells: it lives outside the
// reserved namespaces, names a template of its own namespace and of a
// template kind (a dependency kind for a binding of the dependencies
// distributor), carries the template's binding name, and has a placement
// unless the distributor made it. A ClusterResourceBinding (held as a
// ResourceBinding with no namespace) names a cluster-scoped template, a
// ResourceBinding a namespaced one: only cluster-level identities write
// the former, so a tenant's binding never reaches a cluster-scoped object.
// The webhook refuses such a binding when it is written; the controllers
// refuse it again, as the webhook is optional.
func ValidateResourceBinding(rb *workv1.ResourceBinding, opts Options) field.ErrorList {
	opts = opts.WithDefaults()
	var errs field.ErrorList
	r := rb.Spec.Resource
	res := field.NewPath("spec", "resource")
	if opts.Reserved(rb.Namespace) {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "namespace"), fmt.Sprintf("namespace %s is reserved: its objects are never propagated", rb.Namespace)))
	}
	switch {
	case r.Namespace != rb.Namespace && clusterScoped(rb):
		errs = append(errs, field.Forbidden(res.Child("namespace"), "must be empty: a ClusterResourceBinding propagates only a cluster-scoped template"))
	case r.Namespace != rb.Namespace:
		errs = append(errs, field.Forbidden(res.Child("namespace"), fmt.Sprintf("must be the binding's own namespace %q: a binding propagates only a template of its namespace", rb.Namespace)))
	}
	if gk := hoststore.GroupKindOf(r); gk == NamespaceKind && opts.Reserved(r.Name) {
		errs = append(errs, field.Forbidden(res.Child("name"), fmt.Sprintf("namespace %s is reserved: it is never propagated", r.Name)))
	}
	if r.Name == "" {
		errs = append(errs, field.Required(res.Child("name"), "the template's name"))
	}
	gvk := schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
	if Attached(rb) {
		if clusterScoped(rb) {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(LabelAttached), "the dependencies distributor writes ResourceBindings only"))
		}
		if kinds := opts.DependencyKinds(); gvk.GroupVersion() != (schema.GroupVersion{Version: "v1"}) || !slices.Contains(kinds, gvk.Kind) {
			errs = append(errs, field.NotSupported(res.Child("kind"), r.APIVersion+" "+r.Kind, dependencyKindNames(kinds)))
		}
		if rb.Spec.Placement != nil {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "placement"), "a binding of the dependencies distributor follows the workloads that require it and has no placement"))
		}
	} else {
		errs = append(errs, validateTemplateKind(rb, gvk, opts)...)
		if rb.Spec.Placement == nil {
			errs = append(errs, field.Required(field.NewPath("spec", "placement"),
				fmt.Sprintf("only the detector's bindings (with the claiming policy's placement) and the dependencies distributor's (label %s) are rendered", LabelAttached)))
		}
	}
	if want := hoststore.BindingName(gvk.GroupKind(), r.Name); r.Name != "" && rb.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), rb.Name, fmt.Sprintf("the binding of %s %s/%s is named %q", r.Kind, r.Namespace, r.Name, want)))
	}
	return errs
}

func dependencyKindNames(kinds []string) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = "v1 " + k
	}
	return out
}

// validateTemplateKind checks that a binding names a kind the detector
// runs for, in the binding's scope. Without the control plane's
// discovery (the webhook), the kind must pass the --template-kinds
// filter (or not be skipped when there is none); the controllers then
// check the scope too, and readTemplate the template's own.
func validateTemplateKind(rb *workv1.ResourceBinding, gvk schema.GroupVersionKind, opts Options) field.ErrorList {
	kind := field.NewPath("spec", "resource", "kind")
	value := gvk.GroupVersion().String() + " " + gvk.Kind
	if opts.kinds == nil {
		switch {
		case len(opts.TemplateKinds) > 0 && !slices.Contains(opts.TemplateKinds, gvk):
			return field.ErrorList{field.NotSupported(kind, value, templateKindNames(opts.TemplateKinds))}
		case len(opts.TemplateKinds) == 0 && SkippedKind(gvk.GroupKind()):
			return field.ErrorList{field.Forbidden(kind, fmt.Sprintf("%s is never a template", value))}
		}
		return nil
	}
	served, namespaced, ok := opts.kinds.ServedKind(gvk.GroupKind())
	if !ok || served != gvk {
		return field.ErrorList{field.NotSupported(kind, value, opts.kinds.KindNames())}
	}
	return ValidateBindingScope(rb, namespaced)
}

// ValidateBindingScope refuses a binding whose kind is not of its scope:
// a ResourceBinding propagates a namespaced kind, a ClusterResourceBinding
// (rb without a namespace) a cluster-scoped one. namespaced is the scope
// the host serves the binding's kind with.
func ValidateBindingScope(rb *workv1.ResourceBinding, namespaced bool) field.ErrorList {
	kind := field.NewPath("spec", "resource", "kind")
	gvk := schema.FromAPIVersionAndKind(rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind)
	value := gvk.GroupVersion().String() + " " + gvk.Kind
	switch {
	case namespaced && clusterScoped(rb):
		return field.ErrorList{field.Forbidden(kind, fmt.Sprintf("%s is namespaced: its binding is a ResourceBinding in the template's namespace", value))}
	case !namespaced && !clusterScoped(rb):
		return field.ErrorList{field.Forbidden(kind, fmt.Sprintf("%s is cluster-scoped: only a ClusterResourceBinding, claimed by a ClusterPropagationPolicy, propagates it", value))}
	}
	return nil
}

func templateKindNames(kinds []schema.GroupVersionKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.GroupVersion().String() + " " + k.Kind
	}
	return out
}

// RefusedError is a binding or Work flotilla will not act on: nothing is
// written for it and nothing reaches a member.
type RefusedError struct {
	// Object names the binding or Work, "ResourceBinding tenant-a/x".
	Object string
	// Reasons are the fields at fault.
	Reasons field.ErrorList
}

// Error names the object and every field at fault.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is refused: %s", e.Object, e.Reasons.ToAggregate().Error())
}

// RefuseBinding is the RefusedError of rb for errs.
func RefuseBinding(rb *workv1.ResourceBinding, errs ...*field.Error) error {
	return &RefusedError{Object: hoststore.BindingRef(rb), Reasons: errs}
}

// ErrPending says a binding is not refused but not settled either: it
// differs from the policy that claims its template (the detector writes it
// back), the scheduler has not yet observed its current spec, or a
// workload it depends on is in one of these states.
var ErrPending = errors.New("the binding waits for the scheduler")

// Trusted is what flotilla renders and applies a binding with: each field
// derived from objects only the control plane or an administrator writes,
// or checked against them.
type Trusted struct {
	// Clusters are the scheduled clusters.
	Clusters []api.TargetCluster
	// Conflict is the effective conflict resolution.
	Conflict api.ConflictResolution
	// Preserve is preserveResourcesOnDeletion.
	Preserve *bool
	// Scheduling is the replica scheduling type of the placement.
	Scheduling api.ReplicaSchedulingType
	// Rollout is the claiming policy's staged rollout, nil for none.
	Rollout *api.RolloutStrategy
}

// ReadTemplate reads a binding's template once ValidateResourceBinding has
// passed, so the kind is one the control plane already watches and the
// namespace is the binding's; nil when the template is gone. A template
// whose namespace is not the binding's is refused: a cache read of a
// cluster-scoped kind ignores the namespace asked for, so a
// ResourceBinding naming a ClusterRole would otherwise read it.
func ReadTemplate(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding) (*unstructured.Unstructured, error) {
	u, err := hoststore.ReadTemplate(ctx, c, rb)
	if err != nil || u == nil {
		return nil, err
	}
	if u.GetNamespace() != rb.Namespace {
		r := rb.Spec.Resource
		return nil, RefuseBinding(rb, field.Forbidden(field.NewPath("spec", "resource", "kind"),
			fmt.Sprintf("%s %s is not of namespace %q: a ResourceBinding propagates a namespaced template of its namespace, a ClusterResourceBinding a cluster-scoped one", r.Kind, r.Name, rb.Namespace)))
	}
	return u, nil
}

// Trust derives what the binding is rendered with. A binding the detector
// made must match the policy that claims its template now (label, placement
// and propagateDeps; until it does it waits), and its clusters count once
// the scheduler has observed its current spec; conflict resolution and
// preserveResourcesOnDeletion come from the policy. A binding the
// dependencies distributor made is rendered to the clusters of the trusted
// workload bindings of its namespace that do refer to the dependency; its
// own spec.clusters and requiredBy are only hints. Anything else is refused
// (a *RefusedError).
func Trust(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, opts Options) (*Trusted, error) {
	if errs := ValidateResourceBinding(rb, opts); len(errs) > 0 {
		return nil, RefuseBinding(rb, errs...)
	}
	if Attached(rb) {
		return trustAttached(ctx, c, rb, opts)
	}
	prev := RecordedClaim(rb)
	claim, invalid, err := claimOf(ctx, c, tmpl, prev)
	if err != nil {
		return nil, err
	}
	if invalid != nil {
		// Refused, not pending: the Works stay as last rendered.
		return nil, RefuseBinding(rb, field.Invalid(field.NewPath("metadata", "labels").Key(hoststore.LabelPolicy), prev.String(), invalid.Message()))
	}
	if claim == nil {
		return nil, RefuseBinding(rb, field.Invalid(field.NewPath("spec", "resource"), api.TemplateRefOf(tmpl).String(), "no propagation policy claims the template"))
	}
	// A binding held by a Lazy claim keeps the placement it was written
	// with until the template changes, so it cannot be checked against
	// the policy: it is taken as written (see the security guide).
	hash, err := policy.SpecificationHash(tmpl)
	if err != nil {
		return nil, err
	}
	recorded := rb.Annotations[AnnotationTemplateSpecHash]
	held := policy.HeldLazily(*claim, prev, recorded, hash)
	// A binding that differs from its claim is not refused but waits: the
	// detector watches policies and bindings and writes it back (a
	// policy changed a moment ago, or someone edited the binding), and
	// the scheduler then schedules the written placement.
	switch {
	case rb.Labels[hoststore.LabelPolicy] != claim.Ref().String(),
		!held && !equality.Semantic.DeepEqual(*rb.Spec.Placement, claim.Spec.Placement),
		!held && rb.Spec.PropagateDeps != claim.Spec.PropagateDeps,
		rb.Status.SchedulerObservedGeneration != rb.Generation,
		// The template changed since the detector wrote the binding: its
		// replicas and requirements may be new, and rendering the new
		// template on the old schedule would roll out what the scheduler
		// has not admitted (a scale-up past a FederatedResourceQuota, or
		// replicas a cluster has no room for, under Duplicated). The
		// detector writes the binding, the scheduler schedules it, then
		// it renders.
		recorded != hash:
		return nil, ErrPending
	}
	placement := &claim.Spec.Placement
	if held {
		placement = rb.Spec.Placement
	}
	scheduling := api.ReplicaSchedulingTypeDuplicated
	if p := placement; p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType != "" {
		scheduling = p.ReplicaScheduling.ReplicaSchedulingType
	}
	return &Trusted{
		Clusters:   rb.Spec.Clusters,
		Conflict:   EffectiveConflictResolution(claim, opts),
		Preserve:   claim.Spec.PreserveResourcesOnDeletion,
		Scheduling: scheduling,
		Rollout:    claim.Spec.Rollout,
	}, nil
}

// claimOf returns the policy that claims tmpl now, given the claim prev a
// binding records (claims are sticky), nil when none does; or the policy
// prev names when it is now invalid.
func claimOf(ctx context.Context, c client.Reader, tmpl *unstructured.Unstructured, prev *policy.ClaimRef) (*policy.Claim, *hoststore.InvalidPolicy, error) {
	pp, cpp, invalid, err := hoststore.PropagationPolicies(ctx, c, tmpl.GetNamespace())
	if err != nil {
		return nil, nil, err
	}
	if p := hoststore.Claimed(invalid, tmpl.GetNamespace(), prev); p != nil {
		return nil, p, nil
	}
	claim, ok := policy.ResolveClaim(tmpl, prev, pp, cpp)
	if !ok {
		return nil, nil, nil
	}
	return &claim, nil, nil
}

// EffectiveConflictResolution is the conflict resolution a claim gives its
// template: the policy's, except that a namespaced PropagationPolicy's
// Overwrite counts as Abort unless Options.AllowNamespacedOverwrite is set.
func EffectiveConflictResolution(claim *policy.Claim, opts Options) api.ConflictResolution {
	cr := claim.Spec.ConflictResolution
	if cr == "" {
		cr = api.ConflictAbort
	}
	if cr == api.ConflictOverwrite && claim.Kind == api.KindPropagationPolicy && !opts.AllowNamespacedOverwrite {
		return api.ConflictAbort
	}
	return cr
}

// trustAttached derives the clusters of a dependency's binding from the
// workload bindings that require it, each checked as trust checks it.
func trustAttached(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding, opts Options) (*Trusted, error) {
	dep := rb.Spec.Resource
	var clusters []api.TargetCluster
	for _, s := range rb.Spec.RequiredBy {
		if s.Namespace != rb.Namespace {
			continue
		}
		var wb workv1.ResourceBinding
		if err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, &wb); err != nil {
			if IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("read binding %s/%s that requires %s: %w", s.Namespace, s.Name, client.ObjectKeyFromObject(rb), err)
		}
		if Attached(&wb) || !wb.Spec.PropagateDeps || len(ValidateResourceBinding(&wb, opts)) > 0 {
			continue
		}
		tmpl, err := ReadTemplate(ctx, c, &wb)
		if IsRefused(err) || (err == nil && tmpl == nil) {
			continue
		}
		if err != nil {
			return nil, err
		}
		_, err = Trust(ctx, c, &wb, tmpl, opts)
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			continue
		case err != nil:
			return nil, err
		}
		in, err := opts.Interpreters().Load(ctx, c)
		if err != nil {
			return nil, err
		}
		deps, err := in.GetDependencies(tmpl)
		if err != nil || !slices.Contains(deps, interpret.Dependency{Kind: dep.Kind, Namespace: dep.Namespace, Name: dep.Name}) {
			continue
		}
		clusters = append(clusters, SnapshotOf(&wb).Clusters...)
	}
	return &Trusted{
		Clusters:   DependentClusters([]api.BindingSnapshot{{Clusters: clusters}}),
		Conflict:   api.ConflictAbort,
		Scheduling: api.ReplicaSchedulingTypeDuplicated,
	}, nil
}
