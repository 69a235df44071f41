// Package api holds flotilla's in-memory form of the Karmada API objects the
// engine reasons about: Cluster (cluster.karmada.io/v1alpha1), the
// propagation and override policies (policy.karmada.io/v1alpha1),
// ResourceBinding (work.karmada.io/v1alpha2) and Work
// (work.karmada.io/v1alpha1). Field names and JSON tags mirror Karmada's so
// Karmada users can bring their YAML unchanged.
//
// The package also owns strict decoding of Karmada YAML (Decode), Karmada's
// defaulting (Default*) and Karmada's webhook validation (Validate*).
//
// Decisions where Karmada is silent or flotilla differs:
//   - ClusterAffinityTerm.OverflowAffinities follows Karmada v1.18
//     (karmada#7386, #7423) field for field, including its validation.
//   - A missing replicaScheduling is defaulted to an explicit Duplicated
//     strategy, so consumers never see nil after defaulting.
//   - Namespaced Karmada objects without a namespace get "default", as
//     kubectl would; template namespaces are left to
//     Bundle.DefaultTemplateNamespaces, which needs the merged bundle.
//   - Validation is slightly stricter than Karmada's webhook where Karmada
//     would accept a policy that can never match: empty cluster names, In
//     or NotIn without values, staticWeightList together with dynamicWeight
//     (Karmada silently ignores the list), a plaintext path that is not a
//     JSON pointer, add or replace image overriders without a value.
//   - Fields Karmada added after v1.18's overflow work (workloadAffinity,
//     multi-component bindings) are not modelled; strict decoding rejects
//     them rather than ignoring them.
//
// It is part of the pure core: it must not import client-go,
// controller-runtime or anything that does I/O, reads the clock or keeps
// mutable global state. Same input, same output, byte for byte.
package api
