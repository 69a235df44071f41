// Package policyvalidation is the policy validation reconciler: a
// PropagationPolicy, ClusterPropagationPolicy, OverridePolicy or
// ClusterOverridePolicy that fails the admission webhook's validation
// (stored while no webhook ran, since the webhook is optional) gets a
// Warning Event PolicyInvalid naming each invalid field, the policy and
// its namespace, recorded again every ten minutes while it stays invalid.
// It only reports: the other reconcilers read valid policies only
// (hoststore), and hold what an invalid one claimed or may override.
//
// It imports controlplane/controller/shared and no other controller
// package.
package policyvalidation
