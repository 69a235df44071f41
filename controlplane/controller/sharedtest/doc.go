// Package sharedtest holds the pure fixtures (bindings, clusters,
// templates) the tests of the controller packages share, including the
// shared layer's own: it imports no controller package. Production code
// must not import it.
package sharedtest
