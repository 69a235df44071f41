// Package dashboard serves flotilla's read-only fleet dashboard: the
// clusters, the workloads (ResourceBindings) with their placement, health
// and conditions, one workload's page with each cluster's rendered diff
// against its template, the staged rollouts and flotilla's incident
// events, rendered on the server with html/template from the control
// plane's informer cache, with a little embedded script that refreshes the
// page's main section. Its own watches (Watches) keep only what the cache
// has not: flotilla's incident events, field-selected by reporting
// controller and reason and bounded per reason, and the Pull clusters'
// Leases of one namespace. Templates (a workload's rendered diff, the label
// filter over templates' labels) come from the control plane's cache too,
// where its detectors keep an informer per template kind.
//
// Every request carries a bearer token that the host apiserver
// authenticates (TokenReview) and authorizes (SubjectAccessReview), with
// the same k8s.io/apiserver delegating authenticator and authorizer that
// controller-runtime's secure metrics filter uses. What a page shows is
// then cut to what the host's RBAC lets that user list, checked per
// resource and namespace with further SubjectAccessReviews, cached
// briefly per user by the delegating authorizer.
//
// It is read-only: it never writes to the host nor reaches a member, and
// it must not import the reconcilers (controlplane/controller/...), the
// member connections or the execution code.
package dashboard
