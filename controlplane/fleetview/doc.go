// Package fleetview serves flotilla's cluster proxy, an aggregated API
// (GroupVersion clusterproxy.flotilla.io/v1alpha1, subresource clusters/proxy;
// not cluster.flotilla.io, whose v1alpha1 the Cluster CRD already serves on
// the host)
// that the host apiserver reaches through an APIService. Authentication and
// authorization are delegated to the host with k8s.io/apiserver's
// delegating authenticator (request-header front proxy, then TokenReview)
// and authorizer (SubjectAccessReview); a request allowed there is sent to
// the member as the requesting user, by impersonation with the Cluster's
// impersonator identity, never with the control plane's own member
// credentials.
//
// The same server serves the search cache (Cache, below SearchPrefix): the
// objects of the kinds the ResourceRegistries select, listed and watched
// across members, each shown only where the host lets the requester list
// (or watch) that resource in its namespace.
//
// It owns the HTTP side and the cache only: where a Cluster is and with which
// impersonator token it is reached comes from a Targets function, so the
// package imports no controller-runtime and reads no Secret itself.
package fleetview
