// Package testkit holds the small helpers that flotilla's tests share across
// packages: waiting for a condition with a deadline and a last reason, free
// loopback ports, and creating or decoding objects that must succeed.
//
// It is test infrastructure like testenv: production packages must not import
// it, and it imports no flotilla package, so every layer's tests (the pure
// core's included) may use it. Fleet and control-plane set-up live with what
// they set up (testenv, controlplane/controller/controllertest).
package testkit
