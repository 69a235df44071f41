// Package crossplane is flotilla's Crossplane provider: crossplane-runtime v2
// managed resource reconcilers for the namespaced kinds of
// fleet.m.flotilla.io/v1alpha1 (apis/v1alpha1). It is a thin adapter in the
// spirit of provider-kubernetes: each managed resource's external resource
// is one of flotilla's objects in a host apiserver, and the continuous
// control plane (controlplane/controller, `terraform-provider-flotilla
// controlplane`) does the real work on the members. Nothing is scheduled,
// rendered or applied to a member here.
//
//   - Cluster → a cluster.flotilla.io Cluster named after the external name
//     (default: the resource's name) with the member's facts and labels, and
//     its kubeconfig copied into a Secret in the host's flotilla-system
//     namespace. Ready follows the host Cluster's Ready condition; the
//     control plane's not-ready/unreachable taints are kept on update.
//   - PropagationPolicy, OverridePolicy → the policy.flotilla.io policy of
//     the same name in the resource's namespace; spec.forProvider is
//     Karmada's spec. Ready once the host has it.
//   - FederatedHPA, CronFederatedHPA → the autoscaling.flotilla.io object of
//     the same name in the resource's namespace; spec.forProvider is
//     Karmada's spec, validated as the webhook does; status.atProvider is
//     the host object's status as the control plane writes it.
//   - MultiClusterService → the networking.flotilla.io (Karmada mode:
//     networking.karmada.io) MultiClusterService of the same name in the
//     resource's namespace; spec.forProvider is Karmada's spec, validated
//     as the webhook does; status.atProvider has its ServiceApplied
//     condition.
//   - Manifest → the template server-side applied to the host in the
//     resource's namespace. status.atProvider holds the claiming policy, the
//     placement (cluster → replicas) from the template's ResourceBinding,
//     per-cluster rendered hashes (controlplane/render run as the execution
//     does, so they equal the members' flotilla.io/rendered-hash), health and
//     the aggregated .status. Ready is Available when the binding is
//     FullyApplied at its generation and every placed cluster is Healthy.
//     On delete the managed resource stays until the binding is gone, that
//     is until the control plane has removed the objects from the members.
//   - managementPolicies [Observe] on a Manifest whose template is not in
//     the host previews the placement with the engine (controlplane/plan:
//     the claim, schedule and render the control plane would run) and
//     writes nothing. crossplane-runtime then reports Synced=False,
//     "external resource does not exist", and still persists atProvider
//     (marked preview: true); Ready is False with a "placement preview"
//     message. If the host already has the template, Observe-only shows its
//     real placement.
//
// Host objects carry the annotations fleet.m.flotilla.io/owner and
// owner-uid naming their managed resource; one owned by another managed
// resource is refused, and Delete deletes only what the managed resource
// owns. An object with no owner is adopted by a policy, by a Manifest only
// with spec.forProvider.adopt, and never by a Cluster (host Clusters are
// cluster-scoped; Cluster rights equal fleet-admin rights). A Manifest
// applies only kinds namespaced in the host, never *.flotilla.io,
// *.karmada.io, *.crossplane.io, RBAC or service-account-token Secrets
// (manifest_kind.go), because it applies with the provider's identity.
// A hash of the applied object
// (fleet.m.flotilla.io/desired-hash) tells Observe whether the host is up
// to date; policies and Clusters are also compared field by field.
//
// A ProviderConfig (namespaced, Secret in its own namespace) or
// ClusterProviderConfig holds the host's kubeconfig (credentials.source
// Secret) or says the host is the management apiserver itself
// (InjectedIdentity), and the fleet name the control plane runs with.
//
// It must not be imported by controlplane/.
package crossplane
