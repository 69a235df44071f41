// Package controllertest sets up the continuous control plane for tests over
// real apiservers (internal/testenv): a host with flotilla's CRDs, member
// clusters registered as Clusters with their credentials, and a
// controller-runtime manager running the reconcilers with short periods
// until the test ends.
//
// It is shared by the tests of the controller, the webhook, the Crossplane
// provider and the CLI, which used to carry copies of it. Production code
// must not import it. Generic waiting and port helpers are in
// internal/testkit.
package controllertest
