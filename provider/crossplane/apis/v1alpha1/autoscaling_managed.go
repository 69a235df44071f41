package v1alpha1

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// GetCondition of this FederatedHPA.
func (mg *FederatedHPA) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this FederatedHPA.
func (mg *FederatedHPA) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this FederatedHPA.
func (mg *FederatedHPA) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this FederatedHPA.
func (mg *FederatedHPA) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this FederatedHPA.
func (mg *FederatedHPA) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this FederatedHPA.
func (mg *FederatedHPA) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this FederatedHPA.
func (mg *FederatedHPA) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this FederatedHPA.
func (mg *FederatedHPA) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this FederatedHPA.
func (mg *FederatedHPA) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this FederatedHPA.
func (mg *FederatedHPA) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this FederatedHPAList.
func (l *FederatedHPAList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this CronFederatedHPA.
func (mg *CronFederatedHPA) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this CronFederatedHPA.
func (mg *CronFederatedHPA) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this CronFederatedHPA.
func (mg *CronFederatedHPA) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this CronFederatedHPA.
func (mg *CronFederatedHPA) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this CronFederatedHPA.
func (mg *CronFederatedHPA) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this CronFederatedHPA.
func (mg *CronFederatedHPA) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this CronFederatedHPA.
func (mg *CronFederatedHPA) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this CronFederatedHPA.
func (mg *CronFederatedHPA) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this CronFederatedHPA.
func (mg *CronFederatedHPA) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this CronFederatedHPA.
func (mg *CronFederatedHPA) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this CronFederatedHPAList.
func (l *CronFederatedHPAList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}
