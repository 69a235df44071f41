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
//
// A test that starts its own fleet (StartFleet, StartRunning) shares nothing
// with other tests but the process: its apiservers, ports, etcd prefix and
// control plane are its own, so it calls t.Parallel and the package's
// fleets start and wait side by side instead of one after the other. A test
// that reads process-wide state stays serial: flotilla's metrics (labelled
// by member names every fleet reuses: member1, member2, …), the
// goroutine count (goleak), the process's logger or environment. Go runs a
// package's serial tests before it resumes the parallel ones, so the two
// never overlap.
package controllertest
