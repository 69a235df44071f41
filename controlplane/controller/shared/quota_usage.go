package shared

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
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
