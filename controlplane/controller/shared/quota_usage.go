package shared

import (
	"context"
	"fmt"
	"strings"

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

// NamespaceQuotas is what scheduling one binding weighs against: the valid
// FederatedResourceQuotas of its namespace and the scheduling results of
// the namespace's other bindings.
type NamespaceQuotas struct {
	// Quotas are the namespace's valid quotas; an invalid one (written
	// while no webhook ran) limits nothing, as its controller refuses it.
	Quotas []policyv1.FederatedResourceQuota
	others []workv1.ResourceBinding
}

// LoadNamespaceQuotas reads what rb is weighed against; nil for a
// cluster-scoped binding or a namespace without a quota.
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
			n.Quotas = append(n.Quotas, *q)
		}
	}
	if len(n.Quotas) == 0 {
		return nil, nil
	}
	var bindings workv1.ResourceBindingList
	if err := c.List(ctx, &bindings, client.InNamespace(rb.Namespace)); err != nil {
		return nil, fmt.Errorf("list bindings of namespace %s: %w", rb.Namespace, err)
	}
	for i := range bindings.Items {
		if b := &bindings.Items[i]; b.Name != rb.Name {
			n.others = append(n.others, *b)
		}
	}
	return n, nil
}

// requests is one replica's request of a binding.
func requests(spec *api.ResourceBindingSpec) corev1.ResourceList {
	if spec.ReplicaRequirements == nil {
		return nil
	}
	return spec.ReplicaRequirements.ResourceRequest
}

// Room is, per cluster a static assignment names, how many replicas rb may
// add there to its previous result: what the assignment's hard limits
// leave after the other bindings' replicas in that cluster, less what rb
// already runs there. The tightest quota wins.
func (n *NamespaceQuotas) Room(rb *workv1.ResourceBinding) map[string]int64 {
	if n == nil {
		return nil
	}
	out := map[string]int64{}
	for _, q := range n.Quotas {
		for _, a := range q.Spec.StaticAssignments {
			used := corev1.ResourceList{}
			for i := range n.others {
				o := &n.others[i].Spec
				for _, tc := range o.Clusters {
					if tc.Name == a.ClusterName {
						used = api.AddResources(used, api.ReplicaUsage(requests(o), int64(tc.Replicas)))
					}
				}
			}
			fit, limited := api.ReplicasWithin(a.Hard, used, requests(&rb.Spec))
			if !limited {
				continue
			}
			for _, tc := range rb.Spec.Clusters {
				if tc.Name == a.ClusterName {
					fit -= int64(tc.Replicas)
				}
			}
			fit = max(0, fit)
			if have, ok := out[a.ClusterName]; !ok || fit < have {
				out[a.ClusterName] = fit
			}
		}
	}
	return out
}

// Exceeded says which quota placing rb's replicas on clusters would break,
// with the numbers; "" when every quota holds. As in Karmada, only a
// result that uses more of a broken limit than rb's previous result is
// refused: lowering a quota below what runs already evicts nothing.
func (n *NamespaceQuotas) Exceeded(rb *workv1.ResourceBinding, clusters []api.TargetCluster) string {
	next := rb.Spec.DeepCopy()
	next.Clusters = clusters
	return n.ExceededBy(&rb.Spec, next)
}

// ExceededBy is Exceeded for a binding whose spec goes from previous (nil
// for a new binding) to next.
func (n *NamespaceQuotas) ExceededBy(previous, next *api.ResourceBindingSpec) string {
	if n == nil {
		return ""
	}
	used := corev1.ResourceList{}
	for i := range n.others {
		used = api.AddResources(used, api.BindingUsage(&n.others[i].Spec))
	}
	requested, had := api.BindingUsage(next), corev1.ResourceList{}
	if previous != nil {
		had = api.BindingUsage(previous)
	}
	var out []string
	for _, q := range n.Quotas {
		was := api.ChargedUsage(q.Spec.Overall, had)
		var broken []string
		for _, e := range api.QuotaExceeded(q.Spec.Overall, used, requested) {
			if e.Requested.Cmp(was[e.Name]) > 0 {
				broken = append(broken, e.String())
			}
		}
		if len(broken) > 0 {
			out = append(out, fmt.Sprintf("FederatedResourceQuota %s/%s: %s", q.Namespace, q.Name, strings.Join(broken, "; ")))
		}
	}
	return strings.Join(out, "; ")
}
