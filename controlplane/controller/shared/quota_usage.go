package shared

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// NamespaceUsage is what the scheduling results of a namespace's bindings
// request together (api.BindingUsage), leaving out the binding called
// except, whose new result is being weighed against the quota.
func NamespaceUsage(ctx context.Context, c client.Reader, namespace string, except *client.ObjectKey) (corev1.ResourceList, error) {
	var list workv1.ResourceBindingList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list bindings of namespace %s: %w", namespace, err)
	}
	used := corev1.ResourceList{}
	for i := range list.Items {
		rb := &list.Items[i]
		if except != nil && client.ObjectKeyFromObject(rb) == *except {
			continue
		}
		used = api.AddResources(used, api.BindingUsage(&rb.Spec))
	}
	return used, nil
}

// NamespaceQuotas is the api.QuotaView of one binding, read from the host.
type NamespaceQuotas struct{ view api.QuotaView }

// LoadNamespaceQuotas reads what rb is weighed against: its namespace's
// valid FederatedResourceQuotas (an invalid one, written while no webhook
// ran, limits nothing, as its controller refuses it) and the namespace's
// other bindings; nil for a cluster-scoped binding or a namespace without
// a quota.
func LoadNamespaceQuotas(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding) (*NamespaceQuotas, error) {
	if rb.Namespace == "" {
		return nil, nil
	}
	var quotas policyv1.FederatedResourceQuotaList
	if err := c.List(ctx, &quotas, client.InNamespace(rb.Namespace)); err != nil {
		return nil, fmt.Errorf("list federatedresourcequotas of namespace %s: %w", rb.Namespace, err)
	}
	n := &NamespaceQuotas{}
	for i := range quotas.Items {
		if q := &quotas.Items[i]; q.DeletionTimestamp.IsZero() && len(q.Validate()) == 0 {
			n.view.Quotas = append(n.view.Quotas, q.Engine())
		}
	}
	if len(n.view.Quotas) == 0 {
		return nil, nil
	}
	var bindings workv1.ResourceBindingList
	if err := c.List(ctx, &bindings, client.InNamespace(rb.Namespace)); err != nil {
		return nil, fmt.Errorf("list bindings of namespace %s: %w", rb.Namespace, err)
	}
	for i := range bindings.Items {
		if b := &bindings.Items[i]; b.Name != rb.Name {
			n.view.Others = append(n.view.Others, b.Spec)
		}
	}
	return n, nil
}

// Room is api.QuotaView.Room for rb's current clusters.
func (n *NamespaceQuotas) Room(rb *workv1.ResourceBinding) map[string]int64 {
	if n == nil {
		return nil
	}
	return n.view.Room(&rb.Spec)
}

// Exceeded is api.QuotaView.ExceededBy for rb moving to clusters.
func (n *NamespaceQuotas) Exceeded(rb *workv1.ResourceBinding, clusters []api.TargetCluster) string {
	next := rb.Spec.DeepCopy()
	next.Clusters = clusters
	return n.ExceededBy(&rb.Spec, next)
}

// ExceededBy is api.QuotaView.ExceededBy.
func (n *NamespaceQuotas) ExceededBy(previous, next *api.ResourceBindingSpec) string {
	if n == nil {
		return ""
	}
	return n.view.ExceededBy(previous, next)
}
