package v1alpha1

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// The accessors below make each kind a crossplane-runtime
// resource.ModernManaged (namespaced managed resource), ProviderConfig or
// ProviderConfigUsage. They are what angryjet would generate, written out
// because they are few and never change.

// GetCondition of this Cluster.
func (mg *Cluster) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this Cluster.
func (mg *Cluster) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this Cluster.
func (mg *Cluster) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this Cluster.
func (mg *Cluster) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this Cluster.
func (mg *Cluster) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this Cluster.
func (mg *Cluster) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this Cluster.
func (mg *Cluster) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this Cluster.
func (mg *Cluster) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this Cluster.
func (mg *Cluster) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this Cluster.
func (mg *Cluster) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this ClusterList.
func (l *ClusterList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this PropagationPolicy.
func (mg *PropagationPolicy) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this PropagationPolicy.
func (mg *PropagationPolicy) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this PropagationPolicy.
func (mg *PropagationPolicy) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this PropagationPolicy.
func (mg *PropagationPolicy) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this PropagationPolicy.
func (mg *PropagationPolicy) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this PropagationPolicy.
func (mg *PropagationPolicy) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this PropagationPolicy.
func (mg *PropagationPolicy) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this PropagationPolicy.
func (mg *PropagationPolicy) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this PropagationPolicy.
func (mg *PropagationPolicy) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this PropagationPolicy.
func (mg *PropagationPolicy) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this PropagationPolicyList.
func (l *PropagationPolicyList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this OverridePolicy.
func (mg *OverridePolicy) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this OverridePolicy.
func (mg *OverridePolicy) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this OverridePolicy.
func (mg *OverridePolicy) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this OverridePolicy.
func (mg *OverridePolicy) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this OverridePolicy.
func (mg *OverridePolicy) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this OverridePolicy.
func (mg *OverridePolicy) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this OverridePolicy.
func (mg *OverridePolicy) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this OverridePolicy.
func (mg *OverridePolicy) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this OverridePolicy.
func (mg *OverridePolicy) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this OverridePolicy.
func (mg *OverridePolicy) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this OverridePolicyList.
func (l *OverridePolicyList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this FederatedResourceQuota.
func (mg *FederatedResourceQuota) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this FederatedResourceQuotaList.
func (l *FederatedResourceQuotaList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this Manifest.
func (mg *Manifest) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this Manifest.
func (mg *Manifest) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this Manifest.
func (mg *Manifest) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this Manifest.
func (mg *Manifest) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference of this Manifest.
func (mg *Manifest) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this Manifest.
func (mg *Manifest) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this Manifest.
func (mg *Manifest) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this Manifest.
func (mg *Manifest) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this Manifest.
func (mg *Manifest) GetObservedGeneration() int64 {
	return mg.Status.GetObservedGeneration()
}

// SetObservedGeneration of this Manifest.
func (mg *Manifest) SetObservedGeneration(g int64) {
	mg.Status.SetObservedGeneration(g)
}

// GetItems of this ManifestList.
func (l *ManifestList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this ProviderConfig.
func (p *ProviderConfig) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions of this ProviderConfig.
func (p *ProviderConfig) SetConditions(c ...xpv2.Condition) {
	p.Status.SetConditions(c...)
}

// GetUsers of this ProviderConfig.
func (p *ProviderConfig) GetUsers() int64 {
	return p.Status.Users
}

// SetUsers of this ProviderConfig.
func (p *ProviderConfig) SetUsers(i int64) {
	p.Status.Users = i
}

// GetCondition of this ClusterProviderConfig.
func (p *ClusterProviderConfig) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions of this ClusterProviderConfig.
func (p *ClusterProviderConfig) SetConditions(c ...xpv2.Condition) {
	p.Status.SetConditions(c...)
}

// GetUsers of this ClusterProviderConfig.
func (p *ClusterProviderConfig) GetUsers() int64 {
	return p.Status.Users
}

// SetUsers of this ClusterProviderConfig.
func (p *ClusterProviderConfig) SetUsers(i int64) {
	p.Status.Users = i
}

// GetProviderConfigReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) GetProviderConfigReference() xpv2.ProviderConfigReference {
	return p.ProviderConfigReference
}

// SetProviderConfigReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) SetProviderConfigReference(r xpv2.ProviderConfigReference) {
	p.ProviderConfigReference = r
}

// GetResourceReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) GetResourceReference() xpv2.TypedReference {
	return p.ResourceReference
}

// SetResourceReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) SetResourceReference(r xpv2.TypedReference) {
	p.ResourceReference = r
}

// GetItems of this ProviderConfigUsageList.
func (l *ProviderConfigUsageList) GetItems() []resource.ProviderConfigUsage {
	items := make([]resource.ProviderConfigUsage, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// Compile-time checks that the kinds satisfy crossplane-runtime's interfaces.
var (
	_ resource.ModernManaged            = &Cluster{}
	_ resource.ModernManaged            = &PropagationPolicy{}
	_ resource.ModernManaged            = &OverridePolicy{}
	_ resource.ModernManaged            = &Manifest{}
	_ resource.ManagedList              = &ManifestList{}
	_ resource.ProviderConfig           = &ProviderConfig{}
	_ resource.ProviderConfig           = &ClusterProviderConfig{}
	_ resource.TypedProviderConfigUsage = &ProviderConfigUsage{}
	_ resource.ProviderConfigUsageList  = &ProviderConfigUsageList{}
)
