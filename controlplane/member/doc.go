// Package member owns every connection flotilla makes to a member cluster,
// in the manner of cluster-api's ClusterCache:
//
//   - Connection, the front ends' description of how to reach a member
//     (kubeconfig, host with token, client certificate or exec plugin), its
//     validation, and the *rest.Config client-go's clientcmd builds from it;
//   - Cache, the one place that creates and keeps the clients of each member
//     (typed, dynamic, cached discovery and a RESTMapper that learns new
//     kinds on a miss);
//   - health: Client.Probe and the api.ErrNotConnected family of errors;
//   - bounds: every request to a member ends after CacheOptions.RequestTimeout,
//     and CollectStatus (API discovery included) when its context ends, so a
//     member that stalls holds no caller forever;
//   - CollectStatus, the live facts the scheduler needs (readiness, version,
//     API enablements, node and resource summary); for a watching cache
//     (CacheOptions.Watch) the summaries come from per-member informers cut
//     down to the fields they need, and discovery is kept for an interval;
//   - Client.EndpointSlices, a member Service's slices for multi-cluster
//     services, from an informer per namespace asked about (a watching
//     cache), cut down to what an export reads, whose changes the cache's
//     OnEndpointSlices handler hears;
//   - Client.WatchApplied, for a watching cache: the objects a fleet
//     applied (managed fields cut down), per resource asked about and
//     selected by its ownership labels, whose changes the caller's handler
//     hears and whose copies Client.AppliedObject hands out, so the work
//     status follows the members without reading every object on a timer
//     nor on every change;
//   - the membership marker, a ConfigMap that records which fleet and
//     member name a cluster was registered under, so one physical cluster is
//     never registered twice under different names.
//
// Credentials never appear in an error or log line this package produces:
// Connection's String redacts them and every error built from a connection is
// scrubbed of its secrets.
//
// It is an I/O package of the engine: it may import client-go,
// controller-runtime's client utilities and internal/, and it must not
// import provider/ or internal/testenv (tests excepted).
package member
