// Package hoststore reads the host store, the Kubernetes apiserver that holds
// the continuous driver's objects (Clusters, policies, ResourceBindings and
// the templates), the way the reconcilers read it: the names of host objects
// (BindingName, LabelPolicy), the policies that may claim or override a
// template, and a binding's rendered Works. The reconcilers
// (controlplane/controller) and the Crossplane provider both read through
// it, so the provider reports exactly what the control plane applies
// without importing the reconcilers.
//
// It reads only; it must not import controlplane/controller or any front
// end (provider/...).
package hoststore
