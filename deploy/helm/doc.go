// Package helm holds the tests of the Helm chart in deploy/helm/flotilla:
// they render it with the pinned helm CLI (tools/helm), have a real host
// apiserver accept every object, and run the control plane as the chart's
// ServiceAccount. The chart itself is YAML; this package has no code of its
// own and nothing imports it.
package helm
