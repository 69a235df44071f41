package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// filter decides whether one cluster may receive the template. It returns a
// human-readable reason when it may not.
type filter func(fc *filterContext, c *api.Cluster) (ok bool, reason string)

// filters run in this order; the first that rejects a cluster gives its
// reason. The slice is never modified.
var filters = []filter{
	filterDeleting,
	filterAPIEnablement,
	filterTaints,
	filterAffinity,
	filterSpreadFields,
	filterEviction,
}

// filterContext is what the filters know about the binding being scheduled,
// prepared once per affinity term.
type filterContext struct {
	binding  *Binding
	previous map[string]int32
	evicting map[string]bool

	// groups are the affinity groups of the current term: the primary one
	// followed by its overflow groups. Nil means every cluster matches.
	groups []*api.ClusterAffinity
	// matchers are the compiled groups, built once per term.
	matchers []policy.ClusterMatcher
	// selected, on the Snapshot path, says per group which clusters it
	// selects, indexed like the snapshot's clusters; index is the position
	// of the cluster being filtered.
	selected [][]bool
	index    int

	// facts, on the Snapshot path, are the facts of the cluster being
	// filtered or scored; nil means read the cluster itself.
	facts *clusterFacts
	// served, on the Snapshot path, is what the cluster being filtered
	// serves of the template's kind; apiUnknown means look it up.
	served apiState

	// tier is set by filterAffinity: the index of the first group the
	// cluster matched.
	tier int

	// buf, when not nil, keeps the reasons already formatted in this
	// decision.
	buf *scratch
}

// name is the cluster's name, from its facts when there are.
func (fc *filterContext) name(c *api.Cluster) string {
	if fc.facts != nil {
		return fc.facts.name
	}
	return c.Name
}

// filterDeleting keeps clusters that are being deleted from receiving
// anything, as Karmada does before running its filter plugins.
func filterDeleting(fc *filterContext, c *api.Cluster) (bool, string) {
	if fc.facts != nil && fc.facts.deleting || fc.facts == nil && !c.DeletionTimestamp.IsZero() {
		return false, "cluster is being deleted"
	}
	return true, ""
}

// filterAPIEnablement requires the template's kind in the cluster's API
// enablements, as Karmada's APIEnablement.Filter does.
//
// A cluster that already runs the template always passes, whatever its
// list says (Karmada: the scheduler never removes a placement because an
// API, a CRD deleted by accident, is gone; the template comes back when it
// is served again). Otherwise the list is trusted only when the
// CompleteAPIEnablements condition is True; an untrusted list that lacks
// the kind rejects the cluster, as Karmada's APIUnknown does, except when
// nothing was collected at all: a cluster whose status is empty, such as
// one declared in Terraform and not probed yet, must not block a plan that
// does not depend on live facts.
func filterAPIEnablement(fc *filterContext, c *api.Cluster) (bool, string) {
	if _, ok := fc.previous[fc.name(c)]; ok {
		return true, ""
	}
	gv, kind := fc.binding.Resource.APIVersion, fc.binding.Resource.Kind
	served := fc.served
	if served == apiUnknown {
		served = servedBy(c, gv, kind)
	}
	switch served {
	case apiServed, apiNothingCollected:
		return true, ""
	}
	if fc.buf != nil && fc.buf.apiWhy[served] != "" {
		return false, fc.buf.apiWhy[served]
	}
	why := fmt.Sprintf("API %s, kind=%s is not in the partially collected API enablements", gv, kind)
	if served == apiNotEnabled {
		why = fmt.Sprintf("API %s, kind=%s is not enabled", gv, kind)
	}
	if fc.buf != nil {
		fc.buf.apiWhy[served] = why
	}
	return false, why
}

// apiState is what a cluster's API enablements say about one kind.
type apiState uint8

const (
	// apiUnknown means not looked up yet.
	apiUnknown apiState = iota
	// apiServed means the kind is listed.
	apiServed
	// apiNotEnabled means a complete list lacks the kind.
	apiNotEnabled
	// apiNotCollected means a partially collected list lacks the kind.
	apiNotCollected
	// apiNothingCollected means the cluster reports no API enablements and
	// does not claim the list is complete.
	apiNothingCollected
)

// servedBy reads a cluster's API enablements for one kind.
func servedBy(c *api.Cluster, gv, kind string) apiState {
	for i := range c.Status.APIEnablements {
		e := &c.Status.APIEnablements[i]
		if e.GroupVersion != gv {
			continue
		}
		for _, r := range e.Resources {
			if r.Kind == kind {
				return apiServed
			}
		}
	}
	if apimeta.IsStatusConditionTrue(c.Status.Conditions, api.ClusterConditionCompleteAPIEnablements) {
		return apiNotEnabled
	}
	if len(c.Status.APIEnablements) == 0 {
		return apiNothingCollected
	}
	return apiNotCollected
}

// filterTaints rejects clusters with a NoSchedule or NoExecute taint the
// placement does not tolerate. A cluster that already runs the template
// ignores NoSchedule, as Karmada's TaintToleration.Filter does, but
// NoExecute still applies: flotilla's scheduler is also Karmada's taint
// manager, for which NoExecute means "get off this cluster", including once
// a toleration's tolerationSeconds have run out (NoExecuteUntolerated).
func filterTaints(fc *filterContext, c *api.Cluster) (bool, string) {
	if fc.facts != nil && !fc.facts.tainted {
		return true, ""
	}
	_, placed := fc.previous[fc.name(c)]
	for i := range c.Spec.Taints {
		t := &c.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule || placed {
			continue
		}
		if !tolerated(fc.binding.Placement.ClusterTolerations, t) {
			return false, fc.taintReason(t, false)
		}
	}
	if t, _ := NoExecuteUntolerated(c.Spec.Taints, fc.binding.Placement.ClusterTolerations, fc.binding.Now); t != nil {
		return false, fc.taintReason(t, tolerated(fc.binding.Placement.ClusterTolerations, t))
	}
	return true, ""
}

// taintReason says why the taint rejects a cluster: it is not tolerated,
// or (expired) its toleration's tolerationSeconds have passed. Clusters
// sharing a taint, as fleets tainted by one policy do, share the string.
func (fc *filterContext) taintReason(t *corev1.Taint, expired bool) string {
	key := taintReason{key: t.Key, value: t.Value, effect: string(t.Effect), expired: expired}
	if why, ok := fc.buf.taintWhyOf(key); ok {
		return why
	}
	why := "untolerated taint " + t.ToString()
	if expired {
		why = "taint " + t.ToString() + " is no longer tolerated: the toleration's tolerationSeconds have passed"
	}
	if fc.buf != nil {
		if fc.buf.taintWhy == nil {
			fc.buf.taintWhy = map[taintReason]string{}
		}
		fc.buf.taintWhy[key] = why
	}
	return why
}

// tolerated reports whether any toleration tolerates the taint.
func tolerated(tolerations []corev1.Toleration, t *corev1.Taint) bool {
	for i := range tolerations {
		if tolerates(&tolerations[i], t) {
			return true
		}
	}
	return false
}

// tolerates is Kubernetes' Toleration.ToleratesTaint with the comparison
// operators off, as Karmada calls it: only Equal and Exists are
// understood; the alpha numeric operators (Lt, Gt) never match.
func tolerates(tol *corev1.Toleration, t *corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case "", corev1.TolerationOpEqual:
		return tol.Value == t.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

// filterAffinity keeps clusters that match the term's primary group or one of
// its overflow groups, and records which one matched first.
func filterAffinity(fc *filterContext, c *api.Cluster) (bool, string) {
	fc.tier = 0
	if fc.groups == nil {
		return true, ""
	}
	if fc.selected != nil {
		for i, sel := range fc.selected {
			if sel[fc.index] {
				fc.tier = i
				return true, ""
			}
		}
		return false, notAffine
	}
	if fc.matchers == nil {
		fc.matchers = make([]policy.ClusterMatcher, len(fc.groups))
		for i, g := range fc.groups {
			fc.matchers[i] = policy.NewClusterMatcher(g)
		}
	}
	for i, matches := range fc.matchers {
		if matches(c) {
			fc.tier = i
			return true, ""
		}
	}
	return false, notAffine
}

// notAffine is the reason a cluster outside every affinity group is left out.
const notAffine = "cluster does not match the placement cluster affinity"

// filterSpreadFields rejects clusters that lack a field a spread constraint
// groups by, since they cannot be placed in any group.
func filterSpreadFields(fc *filterContext, c *api.Cluster) (bool, string) {
	for _, sc := range fc.binding.Placement.SpreadConstraints {
		if sc.SpreadByLabel != "" {
			if _, ok := c.Labels[sc.SpreadByLabel]; !ok {
				return false, fmt.Sprintf("cluster has no %q label to spread by", sc.SpreadByLabel)
			}
			continue
		}
		// On the Snapshot path the cluster object, out of cache in large
		// fleets, is not read.
		f := fc.facts
		switch sc.SpreadByField {
		case api.SpreadByFieldProvider:
			if f != nil && f.noProvider || f == nil && c.Spec.Provider == "" {
				return false, "cluster has no provider to spread by"
			}
		case api.SpreadByFieldRegion:
			if f != nil && f.noRegion || f == nil && c.Spec.Region == "" {
				return false, "cluster has no region to spread by"
			}
		case api.SpreadByFieldZone:
			if f != nil && f.noZone || f == nil && zoneOf(c) == "" {
				return false, "cluster has no zone to spread by"
			}
		}
	}
	return true, ""
}

// filterEviction keeps clusters under graceful eviction from receiving the
// template again while the eviction is in progress.
func filterEviction(fc *filterContext, c *api.Cluster) (bool, string) {
	if fc.evicting[fc.name(c)] {
		return false, "template is being evicted from the cluster"
	}
	return true, ""
}

// zoneOf is the zone a cluster is grouped under: the first of spec.zones,
// or the deprecated spec.zone. A cluster spanning several zones is grouped
// under its first one.
func zoneOf(c *api.Cluster) string {
	if len(c.Spec.Zones) > 0 {
		return c.Spec.Zones[0]
	}
	return c.Spec.Zone
}
