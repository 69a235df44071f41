// Package override applies OverridePolicy and ClusterOverridePolicy rules to
// a resource template for one member cluster, with Karmada's semantics: the
// seven overriders (image, command, args, labels, annotations, field,
// plaintext), rule by rule in the order policy matching hands them over,
// each rule only where its targetCluster matches.
//
// It owns the overrider mechanics and image reference parsing. Which
// policies apply and in what order belongs to package policy; replica
// revision and ownership metadata belong to package render.
//
// It is part of the pure core: it must not import client-go,
// controller-runtime or anything that does I/O, reads the clock or keeps
// mutable global state. The same inputs give the same output, byte for byte.
package override
