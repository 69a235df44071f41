// Package multicluster holds the pure rules of multi-cluster services
// (the MCS API's ServiceExport and ServiceImport): the names of derived
// Services and of collected and imported EndpointSlices, which member
// EndpointSlice a cluster may contribute (ExportedSlice), the conversion of
// a member's slice into the host's collected copy and of collected slices
// into a consumer's, and the CRDs of the API.
//
// It is part of the pure core: no client library, no I/O, no clock. The
// continuous driver's mcs controller and the shared layer's Work
// verification both render through it, so what the controller writes and
// what the execution controller accepts are the same function.
package multicluster
