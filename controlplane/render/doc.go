// Package render turns a resource template and its scheduling result into
// the work for each member cluster: the full object flotilla will apply
// there. Per cluster it revises replicas (Divided scheduling), applies the
// override policies, strips the fields an apiserver populates and stamps the
// ownership labels and annotations the execution layer uses for pruning and
// conflict detection. It mirrors the order of Karmada's ensureWork.
//
// It owns the ownership label and annotation keys and the canonical JSON and
// hash of a rendered object. Scheduling belongs to package scheduler, policy
// matching to package policy and overrider mechanics to package override.
//
// It is part of the pure core: it must not import client-go,
// controller-runtime or anything that does I/O, reads the clock or keeps
// mutable global state. The same inputs give the same output, byte for byte.
package render
