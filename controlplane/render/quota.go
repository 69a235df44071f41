package render

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// QuotaResourceQuota is the ResourceQuota a FederatedResourceQuota's static
// assignment to cluster becomes, rendered for that cluster as any template
// is (ownership labels, the rendered hash): named after the quota, in its
// namespace, with the assignment's hard limits. ok is false when the quota
// assigns nothing to cluster. The continuous driver puts it in a Work and
// `terraform plan` shows it, so both apply the same object.
func QuotaResourceQuota(q *api.FederatedResourceQuota, cluster, fleet string) (w Work, ok bool, err error) {
	i := slices.IndexFunc(q.Spec.StaticAssignments, func(a api.StaticClusterAssignment) bool { return a.ClusterName == cluster })
	if i < 0 {
		return Work{}, false, nil
	}
	rq := &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Namespace: q.Namespace, Name: q.Name},
		Spec:       corev1.ResourceQuotaSpec{Hard: q.Spec.StaticAssignments[i].Hard},
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rq)
	if err != nil {
		return Work{}, false, fmt.Errorf("convert the ResourceQuota of FederatedResourceQuota %s/%s: %w", q.Namespace, q.Name, err)
	}
	rendered, err := Render(Input{
		Template: &unstructured.Unstructured{Object: raw},
		Clusters: []Target{{Cluster: &api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}}},
		Fleet:    fleet,
	})
	if err != nil {
		return Work{}, false, fmt.Errorf("render the ResourceQuota of FederatedResourceQuota %s/%s for cluster %s: %w", q.Namespace, q.Name, cluster, err)
	}
	return rendered[cluster], true, nil
}
