package shared

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Labels that tie a Work to the FederatedResourceQuota whose static
// assignment it carries, Karmada's federatedresourcequota.karmada.io keys
// in flotilla's group.
const (
	// LabelQuotaNamespace holds the namespace of the Work's quota.
	LabelQuotaNamespace = "federatedresourcequota.flotilla.io/namespace"
	// LabelQuotaName holds the name of the Work's quota.
	LabelQuotaName = "federatedresourcequota.flotilla.io/name"
	// LabelQuotaID holds the UID of the Work's quota.
	LabelQuotaID = "federatedresourcequota.flotilla.io/permanent-id"
)

// QuotaWork reports whether w is (or claims to be) a Work of a
// FederatedResourceQuota.
func QuotaWork(w *workv1.Work) bool {
	_, ok := w.Labels[LabelQuotaName]
	return ok
}

// QuotaResourceQuota is the ResourceQuota a quota's static assignment to
// cluster becomes (render.QuotaResourceQuota, which Terraform's plan shows
// too); false when the quota assigns nothing to cluster.
func QuotaResourceQuota(q *policyv1.FederatedResourceQuota, cluster, fleet string) (*unstructured.Unstructured, bool, error) {
	e := q.Engine()
	w, ok, err := render.QuotaResourceQuota(&e, cluster, fleet)
	return w.Object, ok, err
}

// NewQuotaWork is the Work that carries a quota's ResourceQuota to
// cluster, or nil when the quota assigns nothing to it. Its conflict
// resolution is Abort: a ResourceQuota the member's owner made is never
// taken over.
func NewQuotaWork(q *policyv1.FederatedResourceQuota, cluster, fleet string) (*workv1.Work, error) {
	obj, ok, err := QuotaResourceQuota(q, cluster, fleet)
	if err != nil || !ok {
		return nil, err
	}
	raw, err := render.CanonicalJSON(obj)
	if err != nil {
		return nil, err
	}
	return &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   ExecutionNamespace(cluster),
			Name:        WorkName(api.TemplateRefOf(obj)),
			Labels:      map[string]string{LabelQuotaNamespace: q.Namespace, LabelQuotaName: q.Name, LabelQuotaID: string(q.UID)},
			Annotations: map[string]string{AnnotationConflictResolution: string(api.ConflictAbort)},
			Finalizers:  []string{FinalizerExecution},
		},
		Spec: api.WorkSpec{Workload: api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}, nil
}

// validateQuotaWork is ValidateWork for a Work of a quota: it lives in an
// execution namespace, names its quota and the quota's UID, names no
// binding and no namespace, and carries exactly one manifest, the v1
// ResourceQuota of the quota's namespace and name, under the Work name it
// is given.
func validateQuotaWork(w *workv1.Work) field.ErrorList {
	var errs field.ErrorList
	md := field.NewPath("metadata")
	labels := md.Child("labels")
	if _, ok := ClusterOfNamespace(w.Namespace); !ok {
		errs = append(errs, field.Invalid(md.Child("namespace"), w.Namespace, "a Work lives in the execution namespace "+ExecutionNamespacePrefix()+"<cluster> of its cluster"))
	}
	ns, name := w.Labels[LabelQuotaNamespace], w.Labels[LabelQuotaName]
	for _, l := range []string{LabelQuotaNamespace, LabelQuotaName, LabelQuotaID} {
		if w.Labels[l] == "" {
			errs = append(errs, field.Required(labels.Key(l), "the FederatedResourceQuota the Work carries"))
		}
	}
	if _, ok := BindingOfWork(w); ok || w.Labels[LabelBindingPermanentID] != "" || NamespaceWork(w) {
		errs = append(errs, field.Forbidden(labels.Key(LabelQuotaName), "a Work carries a quota's ResourceQuota, a synced namespace or a binding's template, only one"))
	}
	ms := field.NewPath("spec", "workload", "manifests")
	obj, bad := soleManifest(w, "a quota Work carries exactly one manifest, the ResourceQuota")
	if bad != nil {
		return append(errs, bad)
	}
	ref := api.TemplateRefOf(obj)
	if ref.Group != "" || ref.Kind != "ResourceQuota" || ref.Namespace != ns || ref.Name != name {
		errs = append(errs, field.Invalid(ms.Index(0), ref.String(), fmt.Sprintf("must be the v1 ResourceQuota %s/%s named by labels %s and %s", ns, name, LabelQuotaNamespace, LabelQuotaName)))
	} else if want := WorkName(ref); w.Name != want {
		errs = append(errs, field.Invalid(md.Child("name"), w.Name, fmt.Sprintf("the Work of ResourceQuota %s/%s is named %q", ns, name, want)))
	}
	return errs
}

// verifyQuotaWork is VerifyWork for a Work of a quota: it has the shape
// the quota controller writes, its execution namespace is flotilla's, its
// quota exists with the UID of its label, is valid, assigns the cluster,
// and the manifest is the ResourceQuota rendered from that assignment
// now. A Work edited in its execution namespace (a raised hard limit)
// waits for the controller to write it back and is never applied.
func verifyQuotaWork(ctx context.Context, c client.Reader, w *workv1.Work, cluster string, opts Options) (*Trusted, error) {
	refuse := func(errs ...*field.Error) error {
		return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: errs}
	}
	if errs := validateQuotaWork(w); len(errs) > 0 {
		return nil, refuse(errs...)
	}
	var es corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: w.Namespace}, &es); err != nil {
		return nil, fmt.Errorf("read execution namespace %s: %w", w.Namespace, err)
	}
	if err := CheckExecutionSpace(&es, cluster); err != nil {
		return nil, err
	}
	key := client.ObjectKey{Namespace: w.Labels[LabelQuotaNamespace], Name: w.Labels[LabelQuotaName]}
	var q policyv1.FederatedResourceQuota
	err := c.Get(ctx, key, &q)
	switch {
	case IsNotFound(err):
		// The quota controller deletes the Work of a quota that is gone.
		return nil, ErrPending
	case err != nil:
		return nil, fmt.Errorf("read federatedresourcequota %s of work %s/%s: %w", key, w.Namespace, w.Name, err)
	}
	labels := field.NewPath("metadata", "labels")
	if string(q.UID) != w.Labels[LabelQuotaID] {
		return nil, refuse(field.Invalid(labels.Key(LabelQuotaID), w.Labels[LabelQuotaID], "is not the UID of FederatedResourceQuota "+key.String()))
	}
	if !q.DeletionTimestamp.IsZero() {
		return nil, ErrPending
	}
	if errs := q.Validate(); len(errs) > 0 {
		return nil, &RefusedError{Object: "FederatedResourceQuota " + key.String(), Reasons: errs}
	}
	want, err := NewQuotaWork(&q, cluster, opts.WithDefaults().Fleet)
	if err != nil {
		return nil, err
	}
	if want == nil {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "namespace"), w.Namespace, fmt.Sprintf("FederatedResourceQuota %s assigns nothing to cluster %s", key, cluster)))
	}
	wantDigest, err := ManifestsDigest(want.Spec.Workload.Manifests)
	if err != nil {
		return nil, err
	}
	if got, err := ManifestsDigest(w.Spec.Workload.Manifests); err != nil || got != wantDigest {
		return nil, ErrPending
	}
	return &Trusted{Clusters: []api.TargetCluster{{Name: cluster}}, Conflict: api.ConflictAbort}, nil
}

// ownedQuotaWork is OwnedWork for a Work of a quota being deleted: one of
// the quota controller's shape. The quota is usually gone by then; removal
// itself deletes the member's ResourceQuota only when it is this fleet's
// and was not adopted.
func ownedQuotaWork(w *workv1.Work) bool {
	return len(validateQuotaWork(w)) == 0
}
