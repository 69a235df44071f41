package shared

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// ValidateWork checks what a Work must be for the execution controller to
// consider it, as far as the Work alone tells: it lives in an execution
// namespace, names its binding by the permanent-id label and the
// namespace/name annotations, and carries exactly one manifest, of the
// binding's namespace (none for a ClusterResourceBinding's). The webhook refuses other Works when they are
// written; the execution controller also checks them against their
// binding (verifyWork). A Work of the namespace sync (label
// namespace.flotilla.io/name) is checked as ValidateNamespaceWork says, one
// of a FederatedResourceQuota (label federatedresourcequota.flotilla.io/name)
// as validateQuotaWork says, one of a ServiceImport (label
// mcs.flotilla.io/import-name) as validateMCSWork says, and one of a
// MultiClusterService (label mcs.flotilla.io/multiclusterservice-name) as
// validateCrossClusterWork says.
func ValidateWork(w *workv1.Work) field.ErrorList {
	if QuotaWork(w) {
		return validateQuotaWork(w)
	}
	if NamespaceWork(w) {
		return ValidateNamespaceWork(w)
	}
	if CrossClusterWork(w) {
		return validateCrossClusterWork(w)
	}
	if MCSWork(w) {
		return validateMCSWork(w)
	}
	var errs field.ErrorList
	md := field.NewPath("metadata")
	if _, ok := ClusterOfNamespace(w.Namespace); !ok {
		errs = append(errs, field.Invalid(md.Child("namespace"), w.Namespace, "a Work lives in the execution namespace "+ExecutionNamespacePrefix()+"<cluster> of its cluster"))
	}
	if w.Labels[LabelBindingPermanentID] == "" {
		errs = append(errs, field.Required(md.Child("labels").Key(LabelBindingPermanentID), "the UID of the Work's ResourceBinding"))
	}
	// A ClusterResourceBinding's Works have an empty namespace annotation.
	key, ok := BindingOfWork(w)
	if !ok {
		errs = append(errs, field.Required(md.Child("annotations").Key(AnnotationBindingName), "the name (and namespace, unless a ClusterResourceBinding) of the Work's binding"))
	}
	ms := field.NewPath("spec", "workload", "manifests")
	obj, bad := soleManifest(w, "a Work carries exactly one manifest, its binding's rendered template")
	if bad != nil {
		return append(errs, bad)
	}
	if ns := obj.GetNamespace(); ok && ns != key.Namespace {
		errs = append(errs, field.Invalid(ms.Index(0).Child("metadata", "namespace"), ns, fmt.Sprintf("must be the namespace %q of the Work's ResourceBinding", key.Namespace)))
	}
	return errs
}

// VerifyWork checks that a Work belongs to a binding flotilla renders to
// it: the binding its annotations name exists with the UID of its
// permanent-id label, the binding passes trust, the Work is the one the
// binding controller names for its template (name and manifest) in a
// cluster the binding is scheduled to or being evicted from, and its
// manifest is the binding's rendering (verifyContent). It returns the
// binding's trusted settings, a *RefusedError, or errPending. A Work
// written by anyone else, with labels and annotations computed to look
// right, gets no further: the execution namespaces are not a trust
// boundary by themselves.
func VerifyWork(ctx context.Context, c client.Reader, w *workv1.Work, cluster string, opts Options) (*Trusted, error) {
	if QuotaWork(w) {
		return verifyQuotaWork(ctx, c, w, cluster, opts)
	}
	if NamespaceWork(w) {
		return verifyNamespaceWork(ctx, c, w, cluster, opts)
	}
	if CrossClusterWork(w) {
		return verifyCrossClusterWork(ctx, c, w, cluster, opts)
	}
	if MCSWork(w) {
		return verifyMCSWork(ctx, c, w, cluster, opts)
	}
	refuse := func(errs ...*field.Error) error {
		return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: errs}
	}
	if errs := ValidateWork(w); len(errs) > 0 {
		return nil, refuse(errs...)
	}
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: w.Namespace}, &ns); err != nil {
		return nil, fmt.Errorf("read execution namespace %s: %w", w.Namespace, err)
	}
	if err := CheckExecutionSpace(&ns, cluster); err != nil {
		return nil, err
	}
	key, _ := BindingOfWork(w)
	var rb workv1.ResourceBinding
	err := GetBinding(ctx, c, key, &rb)
	switch {
	case IsNotFound(err):
		return nil, refuse(field.NotFound(field.NewPath("metadata", "annotations").Key(AnnotationBindingName), key.String()))
	case err != nil:
		return nil, fmt.Errorf("read binding %s of work %s/%s: %w", key, w.Namespace, w.Name, err)
	}
	if string(rb.UID) != w.Labels[LabelBindingPermanentID] {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "labels").Key(LabelBindingPermanentID), w.Labels[LabelBindingPermanentID], "is not the UID of binding "+key.String()))
	}
	if errs := ValidateResourceBinding(&rb, opts); len(errs) > 0 {
		return nil, RefuseBinding(&rb, errs...)
	}
	objs, _ := Manifests(w) // ValidateWork decoded them.
	r := rb.Spec.Resource
	got, want := api.TemplateRefOf(objs[0]), api.TemplateRefOfResource(rb.Spec.Resource)
	if !got.SameTemplate(want) {
		return nil, refuse(field.Invalid(field.NewPath("spec", "workload", "manifests").Index(0), got.String(), "is not the template of binding "+key.String()+", "+want.String()))
	}
	if name := WorkName(want); w.Name != name {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "name"), w.Name, fmt.Sprintf("the Work of %s %s/%s is named %q", r.Kind, r.Namespace, r.Name, name)))
	}
	if !rb.DeletionTimestamp.IsZero() {
		return nil, ErrPending
	}
	tmpl, err := ReadTemplate(ctx, c, &rb)
	if err != nil {
		return nil, err
	}
	if tmpl == nil {
		// The binding goes with its template, and the Work with it.
		return nil, ErrPending
	}
	t, err := Trust(ctx, c, &rb, tmpl, opts)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(t.Clusters, func(tc api.TargetCluster) bool { return tc.Name == cluster }) && !Evicting(&rb, cluster) {
		return nil, refuse(field.Invalid(field.NewPath("metadata", "namespace"), w.Namespace, fmt.Sprintf("binding %s is not scheduled to cluster %s", key, cluster)))
	}
	if err := verifyContent(ctx, c, opts.Interpreters(), &rb, tmpl, t, w, cluster, opts.Fleet); err != nil {
		return nil, err
	}
	return t, nil
}

// OwnedWork reports whether a Work being deleted is one whose objects the
// execution controller may remove from its member: its binding exists with
// the UID of its label, and the Work is the one the binding controller
// names for that binding's template. A Work that is not gets its finalizer
// dropped and its member left alone.
func OwnedWork(ctx context.Context, c client.Reader, w *workv1.Work, opts Options) (bool, error) {
	if QuotaWork(w) {
		return ownedQuotaWork(w), nil
	}
	if NamespaceWork(w) {
		return ownedNamespaceWork(w, opts), nil
	}
	if CrossClusterWork(w) {
		// Its MultiClusterService is usually gone by then; removal itself
		// deletes only an object this fleet applied.
		return len(validateCrossClusterWork(w)) == 0, nil
	}
	if MCSWork(w) {
		return ownedMCSWork(w), nil
	}
	if len(ValidateWork(w)) > 0 {
		return false, nil
	}
	key, _ := BindingOfWork(w)
	var rb workv1.ResourceBinding
	err := GetBinding(ctx, c, key, &rb)
	switch {
	case IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read binding %s of work %s/%s: %w", key, w.Namespace, w.Name, err)
	}
	if string(rb.UID) != w.Labels[LabelBindingPermanentID] || rb.Spec.Resource.Namespace != rb.Namespace {
		return false, nil
	}
	objs, _ := Manifests(w)
	got, want := api.TemplateRefOf(objs[0]), api.TemplateRefOfResource(rb.Spec.Resource)
	return got.SameTemplate(want) && w.Name == WorkName(want), nil
}

// IsRefused reports whether err is a refusal rather than a failure.
func IsRefused(err error) bool {
	var refused *RefusedError
	return errors.As(err, &refused)
}

// soleManifest decodes the one manifest a Work of a fixed shape carries
// (a binding's template, a synced namespace, a quota, a ServiceImport's or
// a MultiClusterService's object), or says why it cannot: more or fewer
// than one (want names which), or one that does not decode.
func soleManifest(w *workv1.Work, want string) (*unstructured.Unstructured, *field.Error) {
	ms := field.NewPath("spec", "workload", "manifests")
	if n := len(w.Spec.Workload.Manifests); n != 1 {
		return nil, field.Invalid(ms, n, want)
	}
	objs, err := Manifests(w)
	if err != nil {
		return nil, field.Invalid(ms.Index(0), "(undecodable)", err.Error())
	}
	return objs[0], nil
}
