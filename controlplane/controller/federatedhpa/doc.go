// Package federatedhpa is Karmada's FederatedHPA controller: one
// horizontal pod autoscaler over every member a template is placed on.
// Every sync period it reads, in each member of the template's binding
// and in parallel with a per-member timeout, the pods of the object
// flotilla applied there (that object's namespace and selector), their
// usage from the member's metrics.k8s.io API, and the Pods, Object and
// External metrics from its custom.metrics.k8s.io and
// external.metrics.k8s.io (at most maxMemberReads members at once);
// computes the desired replicas with controlplane/autoscale (Kubernetes'
// algorithm: tolerance, missing and unready pods, stabilization windows,
// scaling policies); writes them to the template through its scale
// subresource, so the scheduler divides them among the members; and
// writes Kubernetes' HPA status and conditions.
//
// A member that does not answer, or does not serve a metric's API, is
// named in the ScalingActive condition and an event; the replicas the
// binding gives it count as pods with missing metrics, and an Object or
// External value without it is partial (it may scale up, never down), so
// it neither stalls the others nor drives a scale-down. Each decision and
// member read is counted in controlplane/metrics.
//
// It imports controlplane/controller/shared and no other controller
// package.
package federatedhpa
