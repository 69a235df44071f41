package shared

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// NamespaceWork reports whether w is (or claims to be) a Work of the
// namespace sync rather than of a binding.
func NamespaceWork(w *workv1.Work) bool {
	_, ok := w.Labels[LabelNamespaceSyncName]
	return ok
}

// ValidateNamespaceWork is ValidateWork for a Work of the namespace sync:
// it lives in an execution namespace, names its host namespace and that
// namespace's UID, names no binding, and carries exactly one manifest, the
// v1 Namespace of that name, under the Work name the sync gives it.
func ValidateNamespaceWork(w *workv1.Work) field.ErrorList {
	var errs field.ErrorList
	md := field.NewPath("metadata")
	if _, ok := ClusterOfNamespace(w.Namespace); !ok {
		errs = append(errs, field.Invalid(md.Child("namespace"), w.Namespace, "a Work lives in the execution namespace "+ExecutionNamespacePrefix()+"<cluster> of its cluster"))
	}
	name := w.Labels[LabelNamespaceSyncName]
	if name == "" {
		errs = append(errs, field.Required(md.Child("labels").Key(LabelNamespaceSyncName), "the name of the host namespace the Work carries"))
	}
	if w.Labels[LabelNamespaceSyncID] == "" {
		errs = append(errs, field.Required(md.Child("labels").Key(LabelNamespaceSyncID), "the UID of the host namespace the Work carries"))
	}
	if _, ok := BindingOfWork(w); ok || w.Labels[LabelBindingPermanentID] != "" {
		errs = append(errs, field.Forbidden(md.Child("labels").Key(LabelNamespaceSyncName), "a Work carries either a synced namespace or a binding's template, not both"))
	}
	ms := field.NewPath("spec", "workload", "manifests")
	obj, bad := soleManifest(w, "a namespace Work carries exactly one manifest, the namespace")
	if bad != nil {
		return append(errs, bad)
	}
	ref := api.TemplateRefOf(obj)
	if ref.Group != "" || ref.Kind != "Namespace" || ref.Namespace != "" || ref.Name != name {
		errs = append(errs, field.Invalid(ms.Index(0), ref.String(), fmt.Sprintf("must be the v1 Namespace %q named by label %s", name, LabelNamespaceSyncName)))
	} else if want := WorkName(ref); w.Name != want {
		errs = append(errs, field.Invalid(md.Child("name"), w.Name, fmt.Sprintf("the Work of Namespace %s is named %q", name, want)))
	}
	return errs
}

// verifyNamespaceWork is verifyWork for a Work of the namespace sync: the
// Work has the shape the sync writes, its execution namespace is
// flotilla's, and its host namespace exists with the UID of its label and
// is one the sync may propagate at all. A reserved or system namespace
// (kube-*, flotilla's, Karmada's, default) is refused whoever wrote the
// Work, so no Work can set the labels of those namespaces in a member. The
// conflict resolution is always Abort: a namespace the member had before
// is neither taken over nor, later, deleted.
func verifyNamespaceWork(ctx context.Context, c client.Reader, w *workv1.Work, cluster string, opts Options) (*Trusted, error) {
	refuse := func(errs ...*field.Error) error {
		return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: errs}
	}
	if errs := ValidateNamespaceWork(w); len(errs) > 0 {
		return nil, refuse(errs...)
	}
	name := w.Labels[LabelNamespaceSyncName]
	if why := skippedNamespaceName(name, opts.WithDefaults()); why != "" {
		return nil, refuse(field.Forbidden(field.NewPath("metadata", "labels").Key(LabelNamespaceSyncName), fmt.Sprintf("namespace %s is never synced to members: %s", name, why)))
	}
	var es corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: w.Namespace}, &es); err != nil {
		return nil, fmt.Errorf("read execution namespace %s: %w", w.Namespace, err)
	}
	if err := CheckExecutionSpace(&es, cluster); err != nil {
		return nil, err
	}
	var ns corev1.Namespace
	err := c.Get(ctx, client.ObjectKey{Name: name}, &ns)
	switch {
	case IsNotFound(err):
		// The sync deletes the Work of a namespace that is gone.
		return nil, ErrPending
	case err != nil:
		return nil, fmt.Errorf("read namespace %s of work %s/%s: %w", name, w.Namespace, w.Name, err)
	}
	if string(ns.UID) != w.Labels[LabelNamespaceSyncID] {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "labels").Key(LabelNamespaceSyncID), w.Labels[LabelNamespaceSyncID], "is not the UID of namespace "+name))
	}
	if !ns.DeletionTimestamp.IsZero() {
		return nil, ErrPending
	}
	if err := verifyNamespaceContent(ctx, c, &ns, w, cluster, opts); err != nil {
		return nil, err
	}
	return &Trusted{Clusters: []api.TargetCluster{{Name: cluster}}, Conflict: api.ConflictAbort}, nil
}

// verifyNamespaceContent is verifyContent for a Work of the namespace
// sync: its Namespace must be the one the sync renders for the cluster now
// (the host namespace's labels and annotations, with the matching
// ClusterOverridePolicies). A different one waits (ErrPending) for the
// sync, which the Work's change brings back, to write it again; a Work
// edited in its execution namespace (a Pod Security label taken off) is
// never applied.
func verifyNamespaceContent(ctx context.Context, c client.Reader, ns *corev1.Namespace, w *workv1.Work, cluster string, opts Options) error {
	var cl clusterv1.Cluster
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, &cl); err != nil {
		return fmt.Errorf("read cluster %s of work %s/%s: %w", cluster, w.Namespace, w.Name, err)
	}
	_, cops, invalid, err := hoststore.OverridePolicies(ctx, c, "")
	if err != nil {
		return err
	}
	tmpl, err := NamespaceTemplate(ns)
	if err != nil {
		return err
	}
	if hoststore.HeldBy(invalid, tmpl) != nil {
		// The sync holds the namespace at its last Works while an invalid
		// ClusterOverridePolicy may apply to it, and a held Work is not
		// applied again (as for templates).
		return ErrPending
	}
	e := cl.Engine()
	rendered, err := render.Render(render.Input{
		Template:  tmpl,
		Clusters:  []render.Target{{Cluster: &e}},
		Overrides: policy.MatchOverrides(tmpl, nil, cops),
		Fleet:     opts.WithDefaults().Fleet,
	})
	if err != nil {
		return ErrPending // the sync reports it
	}
	raw, err := render.CanonicalJSON(rendered[cluster].Object)
	if err != nil {
		return err
	}
	want, err := ManifestsDigest([]api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}})
	if err != nil {
		return err
	}
	if got, err := ManifestsDigest(w.Spec.Workload.Manifests); err != nil || got != want {
		return ErrPending
	}
	return nil
}

// ownedNamespaceWork is ownedWork for a Work of the namespace sync being
// deleted: one of the sync's shape, for a namespace the sync may propagate.
// The host namespace is usually gone by then, so it cannot be compared;
// removal itself deletes the member namespace only when it is this
// fleet's, created for this namespace and not adopted.
func ownedNamespaceWork(w *workv1.Work, opts Options) bool {
	return len(ValidateNamespaceWork(w)) == 0 && skippedNamespaceName(w.Labels[LabelNamespaceSyncName], opts.WithDefaults()) == ""
}
