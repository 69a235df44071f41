// Package mcs is the multi-cluster services controller of the continuous
// driver (Karmada's serviceexport, endpointslice and serviceimport
// controllers in one reconciler over the MCS API's bindings).
//
// For a ServiceExport propagated to clusters it collects, from each of
// those members that runs and exports the Service, the member's
// EndpointSlices of that Service onto the host, into the member's
// execution namespace (where tenants cannot write), labelled with the
// cluster they were read from; a Pull member, which the control plane
// cannot read, contributes what its agent reported into the cluster's
// report space (shared.ReportedSlices). For a ServiceImport propagated to consumer
// clusters it writes, through Works (so execution's ownership, pruning and
// trust checks apply), each consumer's derived Service and one
// EndpointSlice per collected slice of the import's own namespace and
// name. Both follow the members: the member cache's informers of the
// exports' namespaces (member.Client.EndpointSlices) wake an export when a
// slice changes, a Cluster turning Ready or NotReady wakes the exports
// propagated to it, the host's collected slices wake the imports, and
// every binding is reconciled again each resync.
//
// It imports the shared layer and the pure multicluster package, never
// another reconciler package nor provider/.
package mcs
