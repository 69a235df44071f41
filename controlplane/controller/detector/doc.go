// Package detector runs one detector per template kind (started and
// stopped by the shared template kinds registry): it claims templates with
// controlplane/policy and keeps one ResourceBinding per claimed template,
// holding a template whose policy waits (suspension, another scheduler).
// Its orphan collector deletes a ResourceBinding whose template is gone,
// which covers a template deleted while no control plane ran, and the
// bindings of a kind the host no longer serves.
//
// It imports controlplane/controller/shared and no other controller
// package.
package detector
