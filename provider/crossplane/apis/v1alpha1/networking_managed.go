package v1alpha1

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// GetCondition of this MultiClusterService.
func (mg *MultiClusterService) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this MultiClusterService.
func (mg *MultiClusterService) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this MultiClusterService.
func (mg *MultiClusterService) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this MultiClusterService.
func (mg *MultiClusterService) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this MultiClusterService.
func (mg *MultiClusterService) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this MultiClusterService.
func (mg *MultiClusterService) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this MultiClusterService.
func (mg *MultiClusterService) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this MultiClusterService.
func (mg *MultiClusterService) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this MultiClusterService.
func (mg *MultiClusterService) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this MultiClusterService.
func (mg *MultiClusterService) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this MultiClusterServiceList.
func (l *MultiClusterServiceList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}
