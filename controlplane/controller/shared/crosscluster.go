package shared

import (
	"context"
	"errors"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Labels of the Works that carry a MultiClusterService's EndpointSlices to
// a consumer. Such a Work names the MultiClusterService, not a binding,
// and the execution controller checks it against what the
// MultiClusterService renders now (verifyCrossClusterWork).
const (
	// LabelCrossClusterNamespace is the namespace of the Work's
	// MultiClusterService.
	LabelCrossClusterNamespace = "mcs.flotilla.io/multiclusterservice-namespace"
	// LabelCrossClusterName is the name of the Work's MultiClusterService.
	LabelCrossClusterName = "mcs.flotilla.io/multiclusterservice-name"
	// LabelCrossClusterUID is the UID of the Work's MultiClusterService.
	LabelCrossClusterUID = "mcs.flotilla.io/multiclusterservice-uid"
	// crossClusterWorkPrefix starts such a Work's name, apart from a
	// binding's and a ServiceImport's Works.
	crossClusterWorkPrefix = "mcs-cc-"
)

// ServiceGK is the core Service's group kind.
var ServiceGK = schema.GroupKind{Kind: "Service"}

// CrossClusterWork reports whether w is (or claims to be) a Work of a
// MultiClusterService.
func CrossClusterWork(w *workv1.Work) bool {
	_, ok := w.Labels[LabelCrossClusterName]
	return ok
}

// CrossClusterWorkName is the name of the Work that carries obj.
func CrossClusterWorkName(obj *unstructured.Unstructured) string {
	return crossClusterWorkPrefix + WorkName(api.TemplateRefOf(obj))
}

// CrossClusterPlan is what a MultiClusterService gives the fleet now.
type CrossClusterPlan struct {
	// Placed are the clusters the Service's trusted binding propagates it
	// to, sorted.
	Placed []string
	// Providers and Consumers are multicluster.CrossClusterSets of the
	// placement, WhyNot why each listed cluster is left out.
	Providers, Consumers, WhyNot []string
	// Objects are each consumer's EndpointSlices, rendered with the
	// ownership labels.
	Objects map[string][]*unstructured.Unstructured
}

// CrossClusterSets are the providers and consumers of m now: the listed
// ones (or all) among the clusters its Service's trusted binding
// propagates the Service to. A Service with no binding, or one pending or
// refused, is placed nowhere, so m has neither; why says so. A tenant's
// MultiClusterService therefore only ever reaches the clusters its own
// namespace's policies put the Service on.
func CrossClusterSets(ctx context.Context, c client.Reader, m *networkingv1.MultiClusterService, opts Options) (placed, providers, consumers, whyNot []string, err error) {
	key := client.ObjectKey{Namespace: m.Namespace, Name: hoststore.BindingName(ServiceGK, m.Name)}
	var rb workv1.ResourceBinding
	err = c.Get(ctx, key, &rb)
	switch {
	case IsNotFound(err):
		return nil, nil, nil, []string{fmt.Sprintf("Service %s/%s is not propagated (no binding %s)", m.Namespace, m.Name, key.Name)}, nil
	case err != nil:
		return nil, nil, nil, nil, fmt.Errorf("read binding %s of MultiClusterService %s/%s: %w", key, m.Namespace, m.Name, err)
	}
	tmpl, err := ReadTemplate(ctx, c, &rb)
	if err == nil && tmpl == nil {
		return nil, nil, nil, []string{fmt.Sprintf("Service %s/%s does not exist on the host", m.Namespace, m.Name)}, nil
	}
	var t *Trusted
	if err == nil {
		t, err = Trust(ctx, c, &rb, tmpl, opts)
	}
	switch {
	case IsRefused(err):
		return nil, nil, nil, []string{fmt.Sprintf("Service %s/%s: %v", m.Namespace, m.Name, err)}, nil
	case errors.Is(err, ErrPending):
		return nil, nil, nil, []string{fmt.Sprintf("Service %s/%s is not scheduled yet", m.Namespace, m.Name)}, nil
	case err != nil:
		return nil, nil, nil, nil, err
	}
	for _, tc := range t.Clusters {
		placed = append(placed, tc.Name)
	}
	providers, consumers, whyNot = multicluster.CrossClusterSets(m.Spec, placed)
	return placed, providers, consumers, whyNot, nil
}

// RenderCrossCluster is what each consumer of the MultiClusterService m
// gets now: one EndpointSlice per collected slice of the Service of m's
// own namespace and name from each provider but itself
// (multicluster.CrossCluster), rendered with the ownership labels so
// execution applies and removes only what flotilla created. An invalid m
// is refused.
func RenderCrossCluster(ctx context.Context, c client.Reader, m *networkingv1.MultiClusterService, opts Options) (*CrossClusterPlan, error) {
	if errs := m.Validate(); len(errs) > 0 {
		return nil, &RefusedError{Object: "MultiClusterService " + m.Namespace + "/" + m.Name, Reasons: errs}
	}
	placed, providers, consumers, whyNot, err := CrossClusterSets(ctx, c, m, opts)
	if err != nil {
		return nil, err
	}
	plan := &CrossClusterPlan{Placed: placed, Providers: providers, Consumers: consumers, WhyNot: whyNot, Objects: map[string][]*unstructured.Unstructured{}}
	if len(consumers) == 0 {
		return plan, nil
	}
	// Only the Service's own namespace and name: CollectedSlices selects by
	// both, and CrossCluster refuses any other.
	collected, err := CollectedSlices(ctx, c, m.Namespace, m.Name)
	if err != nil {
		return nil, err
	}
	fleet := opts.WithDefaults().Fleet
	for _, consumer := range consumers {
		objs, err := multicluster.CrossCluster(m.Namespace, m.Name, consumer, providers, collected)
		if err != nil {
			return nil, err
		}
		plan.Objects[consumer] = []*unstructured.Unstructured{}
		for _, obj := range objs {
			rendered, err := render.Render(render.Input{Template: obj, Clusters: []render.Target{{Cluster: &api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: consumer}}}}, Fleet: fleet})
			if err != nil {
				return nil, fmt.Errorf("render EndpointSlice %s/%s for cluster %s: %w", obj.GetNamespace(), obj.GetName(), consumer, err)
			}
			plan.Objects[consumer] = append(plan.Objects[consumer], rendered[consumer].Object)
		}
	}
	return plan, nil
}

// NewCrossClusterWork is the Work that carries one EndpointSlice of m to
// cluster. Its conflict resolution is Abort: a slice of that name flotilla
// did not create in the consumer is never taken over.
func NewCrossClusterWork(m *networkingv1.MultiClusterService, cluster string, obj *unstructured.Unstructured) (*workv1.Work, error) {
	raw, err := render.CanonicalJSON(obj)
	if err != nil {
		return nil, fmt.Errorf("encode EndpointSlice %s/%s for cluster %s: %w", obj.GetNamespace(), obj.GetName(), cluster, err)
	}
	w := &workv1.Work{}
	w.Namespace, w.Name = ExecutionNamespace(cluster), CrossClusterWorkName(obj)
	w.Labels = map[string]string{
		LabelCrossClusterNamespace: m.Namespace,
		LabelCrossClusterName:      m.Name,
		LabelCrossClusterUID:       string(m.UID),
	}
	w.Annotations = map[string]string{AnnotationConflictResolution: string(api.ConflictAbort)}
	w.Finalizers = []string{FinalizerExecution}
	w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	return w, nil
}

// validateCrossClusterWork is ValidateWork for a Work of a
// MultiClusterService: it lives in an execution namespace, names its
// MultiClusterService and no binding, import or namespace, and carries
// exactly one EndpointSlice of the MultiClusterService's namespace, of
// the Service of its name, managed by flotilla, under the name
// CrossClusterWorkName gives it. Whoever writes such a Work can at most
// ask for endpoints of that Service in that namespace, and even that only
// once the MultiClusterService renders exactly them (verifyCrossClusterWork).
func validateCrossClusterWork(w *workv1.Work) field.ErrorList {
	var errs field.ErrorList
	md := field.NewPath("metadata")
	if _, ok := ClusterOfNamespace(w.Namespace); !ok {
		errs = append(errs, field.Invalid(md.Child("namespace"), w.Namespace, "a Work lives in the execution namespace "+ExecutionNamespacePrefix()+"<cluster> of its cluster"))
	}
	ns, name := w.Labels[LabelCrossClusterNamespace], w.Labels[LabelCrossClusterName]
	if ns == "" || name == "" || w.Labels[LabelCrossClusterUID] == "" {
		errs = append(errs, field.Required(md.Child("labels"), fmt.Sprintf("a MultiClusterService's Work names it (%s, %s) and its UID (%s)", LabelCrossClusterNamespace, LabelCrossClusterName, LabelCrossClusterUID)))
	}
	if _, ok := BindingOfWork(w); ok || w.Labels[LabelBindingPermanentID] != "" || NamespaceWork(w) || MCSWork(w) || QuotaWork(w) {
		errs = append(errs, field.Forbidden(md.Child("labels").Key(LabelCrossClusterName), "a Work carries either a MultiClusterService's slices, a ServiceImport's objects, a binding's template, a quota or a synced namespace"))
	}
	ms := field.NewPath("spec", "workload", "manifests")
	obj, bad := soleManifest(w, "a MultiClusterService's Work carries exactly one manifest")
	if bad != nil {
		return append(errs, bad)
	}
	ref := api.TemplateRefOf(obj)
	switch {
	case obj.GetNamespace() != ns:
		errs = append(errs, field.Invalid(ms.Index(0).Child("metadata", "namespace"), obj.GetNamespace(), fmt.Sprintf("must be the MultiClusterService's namespace %q", ns)))
	case ref.Group == discoveryv1.GroupName && ref.Kind == "EndpointSlice" &&
		obj.GetLabels()[discoveryv1.LabelServiceName] == name && obj.GetLabels()[discoveryv1.LabelManagedBy] == multicluster.ManagedBy:
	default:
		errs = append(errs, field.Invalid(ms.Index(0), ref.String(), fmt.Sprintf("must be an EndpointSlice of Service %q managed by %s", name, multicluster.ManagedBy)))
	}
	if want := CrossClusterWorkName(obj); w.Name != want {
		errs = append(errs, field.Invalid(md.Child("name"), w.Name, fmt.Sprintf("the Work of %s is named %q", ref, want)))
	}
	return errs
}

// verifyCrossClusterWork is VerifyWork for a Work of a MultiClusterService:
// it has the shape validateCrossClusterWork checks, its execution
// namespace is flotilla's, the MultiClusterService exists with the UID of
// its label, and the Work's slice is exactly one the MultiClusterService
// renders for that cluster now. Any other (a consumer outside the
// Service's placement, endpoints of another namespace edited in) is never
// applied: the Work waits for the mcs controller, which rewrites or
// deletes it.
func verifyCrossClusterWork(ctx context.Context, c client.Reader, w *workv1.Work, cluster string, opts Options) (*Trusted, error) {
	refuse := func(errs ...*field.Error) error {
		return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: errs}
	}
	if errs := validateCrossClusterWork(w); len(errs) > 0 {
		return nil, refuse(errs...)
	}
	if err := checkExecutionSpaceOf(ctx, c, w.Namespace, cluster); err != nil {
		return nil, err
	}
	key := client.ObjectKey{Namespace: w.Labels[LabelCrossClusterNamespace], Name: w.Labels[LabelCrossClusterName]}
	var m networkingv1.MultiClusterService
	err := c.Get(ctx, key, &m)
	switch {
	case IsNotFound(err):
		return nil, ErrPending // the mcs controller deletes the Work
	case err != nil:
		return nil, fmt.Errorf("read MultiClusterService %s of work %s/%s: %w", key, w.Namespace, w.Name, err)
	}
	if string(m.UID) != w.Labels[LabelCrossClusterUID] {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "labels").Key(LabelCrossClusterUID), w.Labels[LabelCrossClusterUID], "is not the UID of MultiClusterService "+key.String()))
	}
	if !m.DeletionTimestamp.IsZero() {
		return nil, ErrPending
	}
	plan, err := RenderCrossCluster(ctx, c, &m, opts)
	if err != nil {
		return nil, err
	}
	objs, ok := plan.Objects[cluster]
	if !ok {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "namespace"), w.Namespace, fmt.Sprintf("MultiClusterService %s does not serve cluster %s", key, cluster)))
	}
	got, _ := ManifestsDigest(w.Spec.Workload.Manifests)
	for _, obj := range objs {
		if CrossClusterWorkName(obj) != w.Name {
			continue
		}
		raw, err := render.CanonicalJSON(obj)
		if err != nil {
			return nil, err
		}
		want, err := ManifestsDigest([]api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}})
		if err != nil {
			return nil, err
		}
		if got == want {
			return &Trusted{Clusters: []api.TargetCluster{{Name: cluster}}, Conflict: api.ConflictAbort}, nil
		}
	}
	return nil, ErrPending
}
