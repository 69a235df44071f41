// Package detector runs one detector per template kind: it claims
// templates with controlplane/policy and keeps one ResourceBinding per
// claimed template, holding a template whose policy waits (suspension,
// another scheduler). Its orphan collector deletes a ResourceBinding whose
// template is gone, which covers a template deleted while no control plane
// ran, and the bindings of a kind the host no longer serves.
//
// It owns the template kinds registry (KindRegistry): the kinds the host
// serves, learnt from discovery at start, every Options.Resync and on a
// CustomResourceDefinition change, with a detector started for each new
// kind and stopped, with its informer and event handlers, when the kind
// goes. The trust checks in shared ask the registry which kinds are
// served through shared.ServedKinds, which Options carries.
//
// It imports controlplane/controller/shared and no other controller
// package.
package detector
