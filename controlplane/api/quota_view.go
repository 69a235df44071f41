package api

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// QuotaView is what scheduling one template of a namespace is weighed
// against: the namespace's valid FederatedResourceQuotas and the
// scheduling results of its other templates. The continuous driver fills
// it from the host, the plan from the fleet passed to it.
// +kubebuilder:object:generate=false
type QuotaView struct {
	// Quotas are the namespace's quotas.
	Quotas []FederatedResourceQuota
	// Others are the scheduling results of the namespace's other templates.
	Others []ResourceBindingSpec
}

// replicaRequest is one replica's request of a binding.
func replicaRequest(spec *ResourceBindingSpec) corev1.ResourceList {
	if spec.ReplicaRequirements == nil {
		return nil
	}
	return spec.ReplicaRequirements.ResourceRequest
}

// Room is, per cluster a static assignment names, how many replicas the
// template of spec may add there to spec's clusters: what the assignment's
// hard limits leave after the other templates' replicas in that cluster,
// less what spec already places there. The tightest quota wins; nil with
// no quota.
func (v *QuotaView) Room(spec *ResourceBindingSpec) map[string]int64 {
	if v == nil || len(v.Quotas) == 0 {
		return nil
	}
	out := map[string]int64{}
	for _, q := range v.Quotas {
		for _, a := range q.Spec.StaticAssignments {
			used := corev1.ResourceList{}
			for i := range v.Others {
				o := &v.Others[i]
				for _, tc := range o.Clusters {
					if tc.Name == a.ClusterName {
						used = AddResources(used, ReplicaUsage(replicaRequest(o), int64(tc.Replicas)))
					}
				}
			}
			fit, limited := ReplicasWithin(a.Hard, used, replicaRequest(spec))
			if !limited {
				continue
			}
			for _, tc := range spec.Clusters {
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

// ExceededBy says which quota a template going from previous (nil for a
// new one) to next would break, with the numbers; "" when every quota
// holds. As in Karmada, only a result that uses more of a broken limit
// than the previous one is refused: lowering a quota below what runs
// already evicts nothing.
func (v *QuotaView) ExceededBy(previous, next *ResourceBindingSpec) string {
	if v == nil || len(v.Quotas) == 0 {
		return ""
	}
	used := corev1.ResourceList{}
	for i := range v.Others {
		used = AddResources(used, BindingUsage(&v.Others[i]))
	}
	requested, had := BindingUsage(next), corev1.ResourceList{}
	if previous != nil {
		had = BindingUsage(previous)
	}
	var out []string
	for _, q := range v.Quotas {
		was := ChargedUsage(q.Spec.Overall, had)
		var broken []string
		for _, e := range QuotaExceeded(q.Spec.Overall, used, requested) {
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
