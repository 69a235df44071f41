// Package apis holds flotilla's own Kubernetes API: the CustomResourceDefinitions
// the continuous control plane stores in a real kube-apiserver. Each group
// version lives in its own package (cluster, policy, work); their specs embed
// the controlplane/api structs so the shapes stay Karmada's, under flotilla's
// API groups so they never clash with an installed Karmada.
//
// The generated CRD manifests are embedded by the crd subpackage.
package apis
