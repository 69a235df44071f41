package dashboard

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// TemplateCache is the informer cache resource templates are read from:
// the control plane's own, in which the leader's detectors already keep an
// informer per template kind (at its group's preferred version, which is
// the version the dashboard asks for, so the informer is shared). In a
// standby replica the dashboard's first read of a kind starts that same
// informer, so a standby never holds more than the leader does.
type TemplateCache interface {
	client.Reader
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// templateKind is a template's kind as the host serves it: the version the
// cache reads it at and the resource the access checks name.
type templateKind struct {
	gvk schema.GroupVersionKind
	res kind
}

// kindOf maps a binding's template reference to the kind the host serves,
// at its group's preferred version.
func (s *Server) kindOf(res api.ObjectReference) (templateKind, error) {
	gv, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil {
		return templateKind{}, fmt.Errorf("the template's apiVersion %q does not parse: %w", res.APIVersion, err)
	}
	mapping, err := s.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: res.Kind})
	if err != nil {
		return templateKind{}, fmt.Errorf("the host does not serve %s %s: %w", res.APIVersion, res.Kind, err)
	}
	return templateKind{gvk: mapping.GroupVersionKind, res: kind{mapping.Resource.Group, mapping.Resource.Resource}}, nil
}

// synced reports whether the template cache's informer of gvk has listed
// its kind, starting the informer if there is none yet. It does not wait:
// an informer that cannot sync (a kind the control plane may not list)
// must not hold a page up.
func (s *Server) synced(ctx context.Context, gvk schema.GroupVersionKind) bool {
	if s.templates == nil {
		return false
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	inf, err := s.templates.GetInformer(ctx, u, cache.BlockUntilSynced(false))
	return err == nil && inf.HasSynced()
}

// template reads a template from the template cache, or from the host
// directly while its kind's informer has not synced yet. The caller has
// checked that the user may get it.
func (s *Server) template(ctx context.Context, k templateKind, namespace, name string) (*unstructured.Unstructured, error) {
	var reader client.Reader = s.templates
	if !s.synced(ctx, k.gvk) {
		reader = s.api
	}
	if reader == nil {
		return nil, fmt.Errorf("no reader of templates")
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		return nil, err
	}
	return u, nil
}

// labelMatcher says whether a binding matches selector for user u: when
// its template's labels match and u may list the template's kind in its
// namespace (the filter is a list by labels; without that right it would
// tell u the labels of templates they may not read), or when the binding's
// own labels match (the control plane's, such as the claiming policy). An
// empty selector matches everything. Templates are listed from the
// template cache by selector, once per kind and namespace of a request; a
// kind whose informer has not synced yet, or that the host does not serve,
// matches by the binding's labels alone.
func (s *Server) labelMatcher(ctx context.Context, u user.Info, selector labels.Selector) func(rb *workv1.ResourceBinding) bool {
	if selector == nil || selector.Empty() {
		return nil
	}
	if _, ok := selector.Requirements(); !ok {
		// labels.Nothing, for a selector that does not parse.
		return func(*workv1.ResourceBinding) bool { return false }
	}
	type key struct{ apiVersion, kind, namespace string }
	matching := map[key]map[string]bool{}
	return func(rb *workv1.ResourceBinding) bool {
		if selector.Matches(labels.Set(rb.Labels)) {
			return true
		}
		ref := rb.Spec.Resource
		k := key{ref.APIVersion, ref.Kind, ref.Namespace}
		names, done := matching[k]
		if !done {
			names = s.matchingTemplates(ctx, u, rb, selector)
			matching[k] = names
		}
		return names[ref.Name]
	}
}

// matchingTemplates are the names of the templates of rb's kind in rb's
// template namespace whose labels match selector, if u may list them.
func (s *Server) matchingTemplates(ctx context.Context, u user.Info, rb *workv1.ResourceBinding, selector labels.Selector) map[string]bool {
	if s.mapper == nil || s.templates == nil {
		return nil
	}
	k, err := s.kindOf(rb.Spec.Resource)
	if err != nil || !s.access.canList(ctx, u, k.res, rb.Spec.Resource.Namespace) || !s.synced(ctx, k.gvk) {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	if err := s.templates.List(ctx, list, client.InNamespace(rb.Spec.Resource.Namespace),
		client.MatchingLabelsSelector{Selector: selector}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	names := make(map[string]bool, len(list.Items))
	for i := range list.Items {
		names[list.Items[i].GetName()] = true
	}
	return names
}

var _ TemplateCache = cache.Cache(nil)
