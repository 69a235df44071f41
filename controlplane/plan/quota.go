package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// quotaLedger weighs each template of a plan against its namespace's
// FederatedResourceQuotas, in template order: what a namespace already
// uses is the previous bindings of templates this plan does not hold,
// plus the results of the templates planned before.
type quotaLedger struct {
	quotas  map[string][]api.FederatedResourceQuota
	planned map[string][]api.ResourceBindingSpec
	// previous are the fleet's bindings whose templates are not planned.
	previous map[string][]api.ResourceBindingSpec
}

// newQuotaLedger indexes the fleet's quotas and bindings; nil without quotas.
func newQuotaLedger(f Fleet, templates []*unstructured.Unstructured) *quotaLedger {
	if len(f.Quotas) == 0 {
		return nil
	}
	l := &quotaLedger{quotas: map[string][]api.FederatedResourceQuota{}, planned: map[string][]api.ResourceBindingSpec{}, previous: map[string][]api.ResourceBindingSpec{}}
	for _, q := range f.Quotas {
		l.quotas[q.Namespace] = append(l.quotas[q.Namespace], q)
	}
	inPlan := make(map[api.TemplateRef]bool, len(templates))
	for _, t := range templates {
		inPlan[api.TemplateRefOf(t)] = true
	}
	for _, b := range f.Bindings {
		if !inPlan[api.TemplateRefOfResource(b.Spec.Resource)] {
			l.previous[b.Spec.Resource.Namespace] = append(l.previous[b.Spec.Resource.Namespace], b.Spec)
		}
	}
	return l
}

// view is what a template of namespace is weighed against; nil when no
// quota limits the namespace.
func (l *quotaLedger) view(namespace string) *api.QuotaView {
	if l == nil || namespace == "" || len(l.quotas[namespace]) == 0 {
		return nil
	}
	others := append(append([]api.ResourceBindingSpec{}, l.previous[namespace]...), l.planned[namespace]...)
	return &api.QuotaView{Quotas: l.quotas[namespace], Others: others}
}

// record counts a planned result in its namespace's usage.
func (l *quotaLedger) record(namespace string, spec api.ResourceBindingSpec) {
	if l != nil && namespace != "" {
		l.planned[namespace] = append(l.planned[namespace], spec)
	}
}
