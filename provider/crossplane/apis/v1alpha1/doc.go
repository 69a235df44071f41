// Package v1alpha1 is fleet.m.flotilla.io/v1alpha1, the API of flotilla's
// Crossplane provider: namespaced managed resources (Cluster,
// PropagationPolicy, OverridePolicy, FederatedResourceQuota, FederatedHPA,
// CronFederatedHPA, MultiClusterService, Manifest) whose external resources are
// flotilla's objects in a host apiserver, plus ProviderConfig,
// ClusterProviderConfig and ProviderConfigUsage. The spec shapes reuse
// controlplane/api, so they stay Karmada's. It holds types only and must not
// import client-go beyond the crossplane-runtime interfaces it implements.
//
// +kubebuilder:object:generate=true
// +groupName=fleet.m.flotilla.io
// +versionName=v1alpha1
package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

// Group and version of the provider's API.
const (
	Group   = "fleet.m.flotilla.io"
	Version = "v1alpha1"
)

var (
	// GroupVersion is fleet.m.flotilla.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kinds of the API, with their GroupVersionKinds as the reconcilers need them.
var (
	ClusterKind                             = reflect.TypeFor[Cluster]().Name()
	ClusterGroupVersionKind                 = GroupVersion.WithKind(ClusterKind)
	PropagationPolicyKind                   = reflect.TypeFor[PropagationPolicy]().Name()
	PropagationPolicyGroupVersionKind       = GroupVersion.WithKind(PropagationPolicyKind)
	OverridePolicyKind                      = reflect.TypeFor[OverridePolicy]().Name()
	OverridePolicyGroupVersionKind          = GroupVersion.WithKind(OverridePolicyKind)
	FederatedResourceQuotaKind              = reflect.TypeFor[FederatedResourceQuota]().Name()
	FederatedResourceQuotaGroupVersionKind  = GroupVersion.WithKind(FederatedResourceQuotaKind)
	FederatedHPAKind                        = reflect.TypeFor[FederatedHPA]().Name()
	FederatedHPAGroupVersionKind            = GroupVersion.WithKind(FederatedHPAKind)
	CronFederatedHPAKind                    = reflect.TypeFor[CronFederatedHPA]().Name()
	CronFederatedHPAGroupVersionKind        = GroupVersion.WithKind(CronFederatedHPAKind)
	MultiClusterServiceKind                 = reflect.TypeFor[MultiClusterService]().Name()
	MultiClusterServiceGroupVersionKind     = GroupVersion.WithKind(MultiClusterServiceKind)
	ManifestKind                            = reflect.TypeFor[Manifest]().Name()
	ManifestGroupVersionKind                = GroupVersion.WithKind(ManifestKind)
	ProviderConfigKind                      = reflect.TypeFor[ProviderConfig]().Name()
	ProviderConfigGroupVersionKind          = GroupVersion.WithKind(ProviderConfigKind)
	ClusterProviderConfigKind               = reflect.TypeFor[ClusterProviderConfig]().Name()
	ClusterProviderConfigGroupVersionKind   = GroupVersion.WithKind(ClusterProviderConfigKind)
	ProviderConfigUsageKind                 = reflect.TypeFor[ProviderConfigUsage]().Name()
	ProviderConfigUsageGroupVersionKind     = GroupVersion.WithKind(ProviderConfigUsageKind)
	ProviderConfigUsageListGroupVersionKind = GroupVersion.WithKind(ProviderConfigUsageKind + "List")
)
