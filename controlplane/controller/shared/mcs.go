package shared

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Labels of the Works that carry a ServiceImport's derived Service and
// imported EndpointSlices to a consumer. Such a Work names the import, not
// a binding: the binding controller never lists it, and the execution
// controller checks it against what the import renders now (verifyMCSWork).
const (
	// LabelMCSImportNamespace is the namespace of the Work's ServiceImport.
	LabelMCSImportNamespace = "mcs.flotilla.io/import-namespace"
	// LabelMCSImportName is the name of the Work's ServiceImport.
	LabelMCSImportName = "mcs.flotilla.io/import-name"
	// LabelMCSImportUID is the UID of the ServiceImport's binding.
	LabelMCSImportUID = "mcs.flotilla.io/import-uid"
	// mcsWorkPrefix starts an import Work's name, so it never takes the
	// name of a binding's Work for a template of the same name.
	mcsWorkPrefix = "mcs-"
)

// MCSWork reports whether w is (or claims to be) a Work of a ServiceImport.
func MCSWork(w *workv1.Work) bool {
	_, ok := w.Labels[LabelMCSImportName]
	return ok
}

// MCSWorkName is the name of the import Work that carries obj.
func MCSWorkName(obj *unstructured.Unstructured) string {
	return mcsWorkPrefix + WorkName(api.TemplateRefOf(obj))
}

// ImportBinding is the key of the binding of the ServiceImport
// namespace/name.
func ImportBinding(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: hoststore.BindingName(multicluster.ServiceImportGK, name)}
}

// CollectedSlices are the host's copies of the member EndpointSlices of the
// exported Service namespace/name, from every cluster. Only a slice in an
// execution namespace whose source-cluster label names that namespace's
// cluster counts: the execution namespaces are written by the control
// plane alone, and a slice elsewhere, whatever its labels, is never an
// endpoint source.
func CollectedSlices(ctx context.Context, c client.Reader, namespace, name string) ([]discoveryv1.EndpointSlice, error) {
	var list discoveryv1.EndpointSliceList
	if err := c.List(ctx, &list, client.MatchingLabels{
		discoveryv1.LabelManagedBy:         multicluster.ManagedBy,
		multicluster.LabelServiceNamespace: namespace,
		multicluster.LabelServiceName:      name,
	}); err != nil {
		return nil, fmt.Errorf("list collected endpoint slices of service %s/%s: %w", namespace, name, err)
	}
	out := list.Items[:0]
	for _, s := range list.Items {
		if cluster, ok := ClusterOfNamespace(s.Namespace); ok && s.Labels[multicluster.LabelSourceCluster] == cluster {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b discoveryv1.EndpointSlice) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out, nil
}

// RenderImport is what each consumer of a ServiceImport's binding gets
// (multicluster.Import), by cluster: the consumers are the binding's
// trusted clusters (Trust), the endpoints the collected slices of the
// import's own namespace and name. A binding whose template is gone wants
// nothing. A refused or pending binding returns Trust's error; an import
// that cannot be rendered (a derived name too long, a bad port) is refused.
func RenderImport(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding, opts Options) (map[string][]*unstructured.Unstructured, error) {
	tmpl, err := ReadTemplate(ctx, c, rb)
	if err != nil || tmpl == nil {
		return nil, err
	}
	t, err := Trust(ctx, c, rb, tmpl, opts)
	if err != nil {
		return nil, err
	}
	collected, err := CollectedSlices(ctx, c, tmpl.GetNamespace(), tmpl.GetName())
	if err != nil {
		return nil, err
	}
	objs, err := multicluster.Import(tmpl, collected)
	if err != nil {
		return nil, RefuseBinding(rb, field.Invalid(field.NewPath("spec", "resource"), rb.Spec.Resource.Name, err.Error()))
	}
	out := make(map[string][]*unstructured.Unstructured, len(t.Clusters))
	fleet := opts.WithDefaults().Fleet
	for _, tc := range t.Clusters {
		for _, obj := range objs {
			// Rendered as a template of its own: the ownership labels let
			// execution prune and remove only what flotilla created.
			rendered, err := render.Render(render.Input{Template: obj, Clusters: []render.Target{{Cluster: &api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: tc.Name}}}}, Fleet: fleet})
			if err != nil {
				return nil, fmt.Errorf("render %s %s/%s for cluster %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), tc.Name, err)
			}
			out[tc.Name] = append(out[tc.Name], rendered[tc.Name].Object)
		}
	}
	return out, nil
}

// NewMCSWork is the Work that carries one object of a ServiceImport to
// cluster. Its conflict resolution is Abort: a derived Service or slice
// of that name that flotilla did not create in the consumer is never
// taken over.
func NewMCSWork(rb *workv1.ResourceBinding, cluster string, obj *unstructured.Unstructured) (*workv1.Work, error) {
	raw, err := render.CanonicalJSON(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s/%s for cluster %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), cluster, err)
	}
	w := &workv1.Work{}
	w.Namespace, w.Name = ExecutionNamespace(cluster), MCSWorkName(obj)
	w.Labels = map[string]string{
		LabelMCSImportNamespace: rb.Namespace,
		LabelMCSImportName:      rb.Spec.Resource.Name,
		LabelMCSImportUID:       string(rb.UID),
	}
	w.Annotations = map[string]string{AnnotationConflictResolution: string(api.ConflictAbort)}
	w.Finalizers = []string{FinalizerExecution}
	w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	return w, nil
}

// validateMCSWork is ValidateWork for a Work of a ServiceImport: it lives
// in an execution namespace, names its import and names no binding, and
// carries exactly one manifest, in the import's namespace: the import's
// derived Service or an EndpointSlice of it that flotilla manages, under
// the name MCSWorkName gives it. So whoever writes such a Work can at
// most ask for a selector-less Service named derived-<import> and its
// slices, in the import's namespace, and even that only once the import
// renders exactly it (verifyMCSWork).
func validateMCSWork(w *workv1.Work) field.ErrorList {
	var errs field.ErrorList
	md := field.NewPath("metadata")
	if _, ok := ClusterOfNamespace(w.Namespace); !ok {
		errs = append(errs, field.Invalid(md.Child("namespace"), w.Namespace, "a Work lives in the execution namespace "+ExecutionNamespacePrefix()+"<cluster> of its cluster"))
	}
	ns, name := w.Labels[LabelMCSImportNamespace], w.Labels[LabelMCSImportName]
	if ns == "" || name == "" || w.Labels[LabelMCSImportUID] == "" {
		errs = append(errs, field.Required(md.Child("labels"), fmt.Sprintf("a ServiceImport's Work names it (%s, %s) and its binding's UID (%s)", LabelMCSImportNamespace, LabelMCSImportName, LabelMCSImportUID)))
	}
	if _, ok := BindingOfWork(w); ok || w.Labels[LabelBindingPermanentID] != "" || NamespaceWork(w) {
		errs = append(errs, field.Forbidden(md.Child("labels").Key(LabelMCSImportName), "a Work carries either a ServiceImport's objects, a binding's template or a synced namespace"))
	}
	ms := field.NewPath("spec", "workload", "manifests")
	obj, bad := soleManifest(w, "a ServiceImport's Work carries exactly one manifest")
	if bad != nil {
		return append(errs, bad)
	}
	derived := multicluster.DerivedPrefix + name
	ref := api.TemplateRefOf(obj)
	switch {
	case obj.GetNamespace() != ns:
		errs = append(errs, field.Invalid(ms.Index(0).Child("metadata", "namespace"), obj.GetNamespace(), fmt.Sprintf("must be the ServiceImport's namespace %q", ns)))
	case ref.Group == "" && ref.Kind == "Service" && obj.GetName() == derived:
	case ref.Group == discoveryv1.GroupName && ref.Kind == "EndpointSlice" &&
		obj.GetLabels()[discoveryv1.LabelServiceName] == derived && obj.GetLabels()[discoveryv1.LabelManagedBy] == multicluster.ManagedBy:
	default:
		errs = append(errs, field.Invalid(ms.Index(0), ref.String(), fmt.Sprintf("must be the Service %q or one of its EndpointSlices managed by %s", derived, multicluster.ManagedBy)))
	}
	if want := MCSWorkName(obj); w.Name != want {
		errs = append(errs, field.Invalid(md.Child("name"), w.Name, fmt.Sprintf("the Work of %s is named %q", ref, want)))
	}
	return errs
}

// verifyMCSWork is VerifyWork for a Work of a ServiceImport: it has the
// shape validateMCSWork checks, its execution namespace is flotilla's,
// the import's binding exists with the UID of its label, is trusted and
// propagates the import to the Work's cluster, and the Work's object is
// exactly one the import renders for that cluster now. An object that is
// not (endpoints edited into the Work, a slice of another Service) is
// never applied: the Work waits for the mcs controller, which writes or
// deletes it.
func verifyMCSWork(ctx context.Context, c client.Reader, w *workv1.Work, cluster string, opts Options) (*Trusted, error) {
	refuse := func(errs ...*field.Error) error {
		return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: errs}
	}
	if errs := validateMCSWork(w); len(errs) > 0 {
		return nil, refuse(errs...)
	}
	if err := checkExecutionSpaceOf(ctx, c, w.Namespace, cluster); err != nil {
		return nil, err
	}
	key := ImportBinding(w.Labels[LabelMCSImportNamespace], w.Labels[LabelMCSImportName])
	var rb workv1.ResourceBinding
	err := c.Get(ctx, key, &rb)
	switch {
	case IsNotFound(err):
		return nil, ErrPending // the mcs controller deletes the Work
	case err != nil:
		return nil, fmt.Errorf("read binding %s of work %s/%s: %w", key, w.Namespace, w.Name, err)
	}
	if string(rb.UID) != w.Labels[LabelMCSImportUID] {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "labels").Key(LabelMCSImportUID), w.Labels[LabelMCSImportUID], "is not the UID of binding "+key.String()))
	}
	if !rb.DeletionTimestamp.IsZero() {
		return nil, ErrPending
	}
	rendered, err := RenderImport(ctx, c, &rb, opts)
	if err != nil {
		return nil, err
	}
	objs, ok := rendered[cluster]
	if !ok {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "namespace"), w.Namespace, fmt.Sprintf("ServiceImport %s/%s is not propagated to cluster %s", rb.Namespace, rb.Spec.Resource.Name, cluster)))
	}
	got, _ := ManifestsDigest(w.Spec.Workload.Manifests)
	for _, obj := range objs {
		if MCSWorkName(obj) != w.Name {
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

// checkExecutionSpaceOf reads the execution namespace ns and refuses it
// unless flotilla made it for cluster.
func checkExecutionSpaceOf(ctx context.Context, c client.Reader, ns, cluster string) error {
	var es corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, &es); err != nil {
		return fmt.Errorf("read execution namespace %s: %w", ns, err)
	}
	return CheckExecutionSpace(&es, cluster)
}

// ownedMCSWork is OwnedWork for a Work of a ServiceImport being deleted:
// one of the shape validateMCSWork admits. Its import is usually gone by
// then; removal itself deletes only an object this fleet applied.
func ownedMCSWork(w *workv1.Work) bool {
	return len(validateMCSWork(w)) == 0
}
