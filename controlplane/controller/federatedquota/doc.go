// Package federatedquota is Karmada's FederatedResourceQuota sync and
// status controllers: each static assignment of a quota becomes a Work in
// the assigned cluster's execution namespace carrying a ResourceQuota named
// after the quota (labels federatedresourcequota.flotilla.io/namespace,
// name and permanent-id), which the execution controller applies and
// prunes like any Work; the quota's status gets the members' ResourceQuota
// statuses (aggregatedStatus) and what the namespace's bindings are
// scheduled to request (overallUsed), the number enforcement compares with
// spec.overall.
//
// It imports controlplane/controller/shared and no other controller
// package.
package federatedquota
