package crossplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

const kindManifest = "Manifest"

// manifestClient is the external client of Manifest managed resources: a
// resource template in the host, which the control plane propagates.
type manifestClient struct {
	host *host
}

// Observe reads the template and its ResourceBinding. While the managed
// resource is being deleted, the template counts as existing until its
// binding is gone, that is until the control plane has removed its objects
// from every member. With managementPolicies [Observe] and no template in
// the host, it previews the placement instead.
func (m *manifestClient) Observe(ctx context.Context, mg *v1alpha1.Manifest) (managed.ExternalObservation, error) {
	desired, err := m.desired(mg)
	switch {
	case isKindRefusal(err) && meta.WasDeleted(mg):
		// Never written, so nothing to wait for.
		return managed.ExternalObservation{}, nil
	case err != nil:
		return managed.ExternalObservation{}, err
	}
	what := templateName(desired)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	err = m.host.client.Get(ctx, client.ObjectKeyFromObject(desired), live)
	switch {
	case apierrors.IsNotFound(err):
		return m.observeAbsent(ctx, mg, desired)
	case err != nil:
		return managed.ExternalObservation{}, fmt.Errorf("read %s in the host: %w", what, err)
	}
	if done, err := ownedOrGone(live, what, kindManifest, mg, refuseUnownedTemplate(mg)); done || err != nil {
		return managed.ExternalObservation{}, err
	}
	rb, err := m.binding(ctx, desired)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	var hashes map[string]string
	if rb != nil && len(rb.Spec.Clusters) > 0 {
		hashes, err = m.renderedHashes(ctx, live, rb)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
	}
	status, _, _ := unstructured.NestedMap(live.Object, "status")
	mg.Status.AtProvider = manifestObservation(rb, status, hashes)
	mg.SetConditions(manifestReadiness(rb))
	upToDate := live.GetAnnotations()[AnnotationDesiredHash] == desired.GetAnnotations()[AnnotationDesiredHash]
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

// observeAbsent handles a template that is not in the host.
func (m *manifestClient) observeAbsent(ctx context.Context, mg *v1alpha1.Manifest, desired *unstructured.Unstructured) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		rb, err := m.binding(ctx, desired)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		// The binding's finalizer holds it until the members are clean.
		return managed.ExternalObservation{ResourceExists: rb != nil, ResourceUpToDate: true}, nil
	}
	if !observeOnly(mg) {
		return managed.ExternalObservation{}, nil
	}
	obs, err := m.preview(ctx, desired)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = obs
	mg.SetConditions(xpv2.Unavailable().WithMessage("placement preview: the template is not in the host and managementPolicies only allow Observe, so nothing is applied"))
	return managed.ExternalObservation{}, nil
}

// Create applies the template to the host.
func (m *manifestClient) Create(ctx context.Context, mg *v1alpha1.Manifest) (managed.ExternalCreation, error) {
	mg.SetConditions(xpv2.Creating())
	return managed.ExternalCreation{}, m.apply(ctx, mg)
}

// Update applies the template to the host.
func (m *manifestClient) Update(ctx context.Context, mg *v1alpha1.Manifest) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, m.apply(ctx, mg)
}

// apply server-side applies the template after checking, right before,
// that the host object is absent or this Manifest's (or, with
// spec.forProvider.adopt, no one's): Observe's check may be a poll old.
func (m *manifestClient) apply(ctx context.Context, mg *v1alpha1.Manifest) error {
	desired, err := m.desired(mg)
	if err != nil {
		return err
	}
	what := templateName(desired)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	switch err := m.host.client.Get(ctx, client.ObjectKeyFromObject(desired), live); {
	case err == nil:
		if err := checkOwner(live, what, kindManifest, mg, refuseUnownedTemplate(mg)); err != nil {
			return err
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read %s in the host: %w", what, err)
	}
	if err := apply(ctx, m.host.client, desired); err != nil {
		return fmt.Errorf("apply %s to the host: %w", what, err)
	}
	return nil
}

// Delete deletes the template from the host if this Manifest owns it; the
// control plane then deletes its binding and, through the binding's
// finalizer, its member objects. A template of a refused kind was never
// written, and one the Manifest does not own is left alone.
func (m *manifestClient) Delete(ctx context.Context, mg *v1alpha1.Manifest) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	desired, err := m.desired(mg)
	switch {
	case isKindRefusal(err):
		return managed.ExternalDelete{}, nil
	case err != nil:
		return managed.ExternalDelete{}, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	return managed.ExternalDelete{}, deleteOwned(ctx, m.host.client, client.ObjectKeyFromObject(desired), live, templateName(desired), kindManifest, mg)
}

// Disconnect is a no-op: host clients are cached and shared.
func (m *manifestClient) Disconnect(context.Context) error { return nil }

// binding reads the template's ResourceBinding; nil when there is none.
func (m *manifestClient) binding(ctx context.Context, tmpl *unstructured.Unstructured) (*workv1.ResourceBinding, error) {
	var rb workv1.ResourceBinding
	key := client.ObjectKey{Namespace: tmpl.GetNamespace(), Name: hoststore.BindingName(tmpl.GroupVersionKind().GroupKind(), tmpl.GetName())}
	if err := m.host.client.Get(ctx, key, &rb); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read binding %s of %s in the host: %w", key, templateName(tmpl), err)
	}
	return &rb, nil
}

// desired is the template as the provider applies it, once the host has
// confirmed that a Manifest may apply its kind (checkTemplateKind).
func (m *manifestClient) desired(mg *v1alpha1.Manifest) (*unstructured.Unstructured, error) {
	u, err := desiredTemplate(mg)
	if err != nil {
		return nil, err
	}
	if err := checkTemplateKind(m.host.client.RESTMapper(), u); err != nil {
		return nil, err
	}
	return u, nil
}

// refuseUnownedTemplate is the refusal of a template no managed resource
// owns: nil, so adopting it, only with spec.forProvider.adopt.
func refuseUnownedTemplate(mg *v1alpha1.Manifest) error {
	if mg.Spec.ForProvider.Adopt {
		return nil
	}
	return errors.New("set spec.forProvider.adopt: true to adopt it (the Manifest then owns it, and deleting the Manifest deletes it)")
}

// desiredTemplate is the template as the provider applies it: the manifest
// with its namespace and name defaulted, server fields dropped, and the
// owner and desired-hash annotations.
func desiredTemplate(mg *v1alpha1.Manifest) (*unstructured.Unstructured, error) {
	raw := mg.Spec.ForProvider.Manifest.Raw
	if len(raw) == 0 {
		return nil, errors.New("spec.forProvider.manifest is empty")
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		return nil, fmt.Errorf("spec.forProvider.manifest is not a JSON object: %w", err)
	}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, errors.New("spec.forProvider.manifest: apiVersion and kind are required")
	}
	switch ns := u.GetNamespace(); ns {
	case "":
		u.SetNamespace(mg.Namespace)
	case mg.Namespace:
	default:
		return nil, fmt.Errorf("spec.forProvider.manifest.metadata.namespace is %q: a Manifest places its template in its own namespace %q", ns, mg.Namespace)
	}
	if u.GetName() == "" {
		u.SetName(externalName(mg))
	}
	if errs := api.ValidateTemplateMeta(u); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = "spec.forProvider.manifest." + e.Error()
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	for _, f := range [][]string{{"status"}, {"metadata", "resourceVersion"}, {"metadata", "uid"}, {"metadata", "generation"}, {"metadata", "creationTimestamp"}, {"metadata", "managedFields"}, {"metadata", "selfLink"}} {
		unstructured.RemoveNestedField(u.Object, f...)
	}
	if err := stamp(u, kindManifest, mg); err != nil {
		return nil, err
	}
	return u, nil
}

// templateName names a template in messages: "Deployment default/web".
func templateName(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}
