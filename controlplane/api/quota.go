package api

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The arithmetic of FederatedResourceQuota. Everything is resource.Quantity:
// a float would round 0.1 CPU times 30 replicas into a refusal or a pass
// that the members' own ResourceQuotas then disagree with.

// requestsPrefix is how a quota names a request explicitly: requests.cpu
// and cpu are the same limit, as in a Kubernetes ResourceQuota.
const requestsPrefix = "requests."

// ReplicaUsage is what replicas copies of one replica's request add up to,
// with "pods" counting the replicas themselves. A nil or empty request still
// counts pods.
func ReplicaUsage(perReplica corev1.ResourceList, replicas int64) corev1.ResourceList {
	if replicas <= 0 {
		return corev1.ResourceList{}
	}
	out := make(corev1.ResourceList, len(perReplica)+1)
	for name, q := range perReplica {
		total := q.DeepCopy()
		total.Mul(replicas)
		out[name] = total
	}
	out[corev1.ResourcePods] = *resource.NewQuantity(replicas, resource.DecimalSI)
	return out
}

// AddResources returns a + b, name by name.
func AddResources(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a)+len(b))
	for name, q := range a {
		out[name] = q.DeepCopy()
	}
	for name, q := range b {
		sum := out[name]
		sum.Add(q)
		out[name] = sum
	}
	return out
}

// ChargedUsage is usage as the names of overall count it: each limit of
// overall gets the usage of its resource, "requests.X" and "X" alike, and a
// limit whose resource is not in usage gets zero. Limits on "limits.X" get
// nothing: a binding carries its replicas' requests, not their limits, so
// those are the members' ResourceQuotas' to enforce.
func ChargedUsage(overall, usage corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(overall))
	for name := range overall {
		src := corev1.ResourceName(strings.TrimPrefix(string(name), requestsPrefix))
		if q, ok := usage[src]; ok {
			out[name] = q.DeepCopy()
			continue
		}
		out[name] = resource.Quantity{Format: overall[name].Format}
	}
	return out
}

// QuotaExcess is one limit of a FederatedResourceQuota that a request
// would break.
type QuotaExcess struct {
	// Name is the limit's resource name, as overall spells it.
	Name corev1.ResourceName
	// Overall is the limit.
	Overall resource.Quantity
	// Used is what other templates of the namespace already use.
	Used resource.Quantity
	// Requested is what the template asks for.
	Requested resource.Quantity
}

// String gives the numbers: "requests.cpu: 1500m requested, 2 used of 3".
func (e QuotaExcess) String() string {
	return fmt.Sprintf("%s: %s requested, %s used of %s", e.Name, e.Requested.String(), e.Used.String(), e.Overall.String())
}

// QuotaExceeded returns the limits of overall that used + requested breaks,
// sorted by name; none when the request fits. used and requested are raw
// usages (ReplicaUsage), charged here by ChargedUsage.
func QuotaExceeded(overall, used, requested corev1.ResourceList) []QuotaExcess {
	u, r := ChargedUsage(overall, used), ChargedUsage(overall, requested)
	var out []QuotaExcess
	for name, limit := range overall {
		total := u[name].DeepCopy()
		total.Add(r[name])
		if req := r[name]; total.Cmp(limit) > 0 && req.Sign() > 0 {
			out = append(out, QuotaExcess{Name: name, Overall: limit.DeepCopy(), Used: u[name], Requested: r[name]})
		}
	}
	slices.SortFunc(out, func(a, b QuotaExcess) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return out
}

// ReplicasWithin is how many replicas of perReplica still fit in overall
// after used, and whether overall limits them at all (false: no limit
// applies, any number fits). A limit already broken leaves zero.
func ReplicasWithin(overall, used, perReplica corev1.ResourceList) (int64, bool) {
	one := ChargedUsage(overall, ReplicaUsage(perReplica, 1))
	u := ChargedUsage(overall, used)
	best, limited := int64(math.MaxInt64), false
	for name, limit := range overall {
		per := one[name]
		if per.Sign() <= 0 {
			continue
		}
		left := limit.DeepCopy()
		left.Sub(u[name])
		n := int64(0)
		if left.Sign() > 0 {
			n = divide(left, per)
		}
		limited = true
		best = min(best, n)
	}
	if !limited {
		return 0, false
	}
	return best, true
}

// divide is floor(a / b) for positive quantities, in exact decimals: no
// unit (a CPU's 100m, memory in the exabytes) overflows or rounds.
func divide(a, b resource.Quantity) int64 {
	q := new(inf.Dec).QuoRound(a.AsDec(), b.AsDec(), 0, inf.RoundDown)
	if n, ok := q.Unscaled(); ok && q.Scale() == 0 {
		return n
	}
	return math.MaxInt64
}

// SumAssignments is the total of every static assignment's hard limits.
func SumAssignments(assignments []StaticClusterAssignment) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, a := range assignments {
		out = AddResources(out, a.Hard)
	}
	return out
}

// ScheduledReplicas is the replicas a scheduling result places in every
// cluster together (a Duplicated workload counts once per cluster).
func ScheduledReplicas(clusters []TargetCluster) int64 {
	var n int64
	for _, c := range clusters {
		n += int64(c.Replicas)
	}
	return n
}

// BindingUsage is what a binding's scheduling result uses of its
// namespace's quota: one replica's request times the replicas scheduled in
// every cluster, Karmada's CalculateResourceUsage (with pods counted). A
// binding with components runs every component in each of its clusters,
// so it uses each component's replicas times its request, per cluster, as
// Karmada counts components.
func BindingUsage(spec *ResourceBindingSpec) corev1.ResourceList {
	if len(spec.Components) > 0 {
		out := corev1.ResourceList{}
		for _, c := range spec.Components {
			var per corev1.ResourceList
			if c.ReplicaRequirements != nil {
				per = c.ReplicaRequirements.ResourceRequest
			}
			out = AddResources(out, ReplicaUsage(per, int64(c.Replicas)*int64(len(spec.Clusters))))
		}
		return out
	}
	var per corev1.ResourceList
	if spec.ReplicaRequirements != nil {
		per = spec.ReplicaRequirements.ResourceRequest
	}
	return ReplicaUsage(per, ScheduledReplicas(spec.Clusters))
}
