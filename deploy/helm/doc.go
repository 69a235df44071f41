// Package helm holds the tests of the Helm charts in deploy/helm/flotilla
// (the control plane) and deploy/helm/flotilla-agent (the pull-mode
// agent): they render them with the pinned helm CLI (tools/helm), have a
// real apiserver accept every object, and run the binary as the charts'
// ServiceAccounts. The chart itself is YAML; this package has no code of its
// own and nothing imports it.
package helm
