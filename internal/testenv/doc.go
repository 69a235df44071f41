// Package testenv owns the real member clusters that flotilla's tests and
// local demos run against: one shared etcd, and per cluster a kube-apiserver
// (TLS plus a bearer token), optionally kube-controller-manager,
// kube-scheduler and kwok with fake nodes, all as plain processes on free
// loopback ports.
//
// It starts only the pinned binaries that `make testenv` builds (see
// BinDir), and it stops only processes it started, by PID. Everything a fleet
// writes (PKI, kubeconfigs, etcd data, process logs) lives in one directory.
//
// StartFleet is the core and knows nothing about testing; Start wraps it for
// tests and registers teardown with t.Cleanup.
//
// testenv is test and developer infrastructure: production packages
// (controlplane, provider) must not import it, and it must not import them.
package testenv
