package apis

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	searchv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/search/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

// Groups names the family of API groups the continuous control plane
// serves its kinds under: flotilla's own (*.flotilla.io, the default, which
// never clash with an installed Karmada) or Karmada's (*.karmada.io, so
// Karmada's YAML applies unchanged). The Go types and their schemas are the
// same in both; only the group (and, for the bindings, the version) differ.
type Groups string

const (
	// FlotillaGroups serves cluster.flotilla.io, policy.flotilla.io, ...
	// at v1alpha1, with Works in flotilla-es-<cluster>.
	FlotillaGroups Groups = "flotilla"
	// KarmadaGroups serves cluster.karmada.io, policy.karmada.io, ...
	// with Karmada's versions (ResourceBinding and ClusterResourceBinding
	// at work.karmada.io/v1alpha2), with Works in karmada-es-<cluster>.
	KarmadaGroups Groups = "karmada"
)

// ParseGroups returns the Groups named s (the --api-groups flag).
func ParseGroups(s string) (Groups, error) {
	switch g := Groups(s); g {
	case FlotillaGroups, KarmadaGroups:
		return g, nil
	}
	return "", fmt.Errorf("unknown API groups %q: want %q or %q", s, FlotillaGroups, KarmadaGroups)
}

// Domain is the domain every group of g ends in.
func (g Groups) Domain() string {
	if g == KarmadaGroups {
		return "karmada.io"
	}
	return "flotilla.io"
}

// Group returns the API group named name ("cluster", "policy", "work",
// "config", "autoscaling", "networking" or "search") in g.
func (g Groups) Group(name string) string { return name + "." + g.Domain() }

// Owns reports whether group is one of g's groups (any group in g's domain).
func (g Groups) Owns(group string) bool {
	return group == g.Domain() || strings.HasSuffix(group, "."+g.Domain())
}

// ExecutionNamespacePrefix starts the name of the host namespace holding
// the Works of one member: "flotilla-es-" or Karmada's "karmada-es-".
func (g Groups) ExecutionNamespacePrefix() string {
	if g == KarmadaGroups {
		return "karmada-es-"
	}
	return "flotilla-es-"
}

// CredentialsNamespace is the host namespace holding the Clusters'
// credentials Secrets (spec.secretRef, spec.impersonatorSecretRef) and the
// control plane's own Secret (the Work signing key): flotilla-system, or
// Karmada's karmada-cluster, where Karmada's users already keep their
// Clusters' Secrets. It is the only namespace whose Secrets the control
// plane reads with its own identity, in either mode.
func (g Groups) CredentialsNamespace() string {
	if g == KarmadaGroups {
		return "karmada-cluster"
	}
	return "flotilla-system"
}

// ClusterLeaseNamespace is the host namespace holding one Lease per
// pull-mode Cluster, renewed by its agent: flotilla-cluster, or Karmada's
// karmada-cluster, where Karmada's agents renew theirs.
func (g Groups) ClusterLeaseNamespace() string {
	if g == KarmadaGroups {
		return "karmada-cluster"
	}
	return "flotilla-cluster"
}

// bindingKinds are the kinds Karmada serves at v1alpha2 in its work group.
var bindingKinds = []string{"ResourceBinding", "ClusterResourceBinding"}

// builders are the API packages' scheme builders, by group name.
var builders = map[string]*scheme.Builder{
	"cluster":     clusterv1.SchemeBuilder,
	"policy":      policyv1.SchemeBuilder,
	"work":        workv1.SchemeBuilder,
	"config":      configv1.SchemeBuilder,
	"autoscaling": autoscalingv1.SchemeBuilder,
	"networking":  networkingv1.SchemeBuilder,
	"search":      searchv1.SchemeBuilder,
}

// groupVersions are the API packages' GroupVersion variables, by group
// name: every reader of a package's GroupVersion sees the groups in use.
var groupVersions = map[string]*schema.GroupVersion{
	"cluster":     &clusterv1.GroupVersion,
	"policy":      &policyv1.GroupVersion,
	"work":        &workv1.GroupVersion,
	"config":      &configv1.GroupVersion,
	"autoscaling": &autoscalingv1.GroupVersion,
	"networking":  &networkingv1.GroupVersion,
	"search":      &searchv1.GroupVersion,
}

var (
	mu      sync.Mutex
	current = FlotillaGroups
)

// Use makes g the API groups of this process: every API package's
// GroupVersion and scheme builder, and so every scheme built afterwards,
// the CRDs crd.Install applies and the execution namespaces. It is the one
// place the choice is made; the controlplane command calls it once, before
// it builds its scheme and starts anything, and a process serves one
// family only (a scheme holding both would map one Go type to two kinds).
func Use(g Groups) {
	mu.Lock()
	defer mu.Unlock()
	for name, gv := range groupVersions {
		*gv = schema.GroupVersion{Group: g.Group(name), Version: "v1alpha1"}
		builders[name].GroupVersion = *gv
	}
	workv1.SchemeBuilder.KindVersions = nil
	if g == KarmadaGroups {
		workv1.SchemeBuilder.KindVersions = map[string]string{}
		for _, k := range bindingKinds {
			workv1.SchemeBuilder.KindVersions[k] = "v1alpha2"
		}
	}
	current = g
}

// Current returns the API groups of this process (FlotillaGroups until Use
// chooses others).
func Current() Groups {
	mu.Lock()
	defer mu.Unlock()
	return current
}

// KindVersion returns the version g serves kind at, in the group named
// group ("work", ...): v1alpha1 except Karmada's bindings.
func (g Groups) KindVersion(group, kind string) string {
	if g == KarmadaGroups && group == "work" {
		for _, k := range bindingKinds {
			if k == kind {
				return "v1alpha2"
			}
		}
	}
	return "v1alpha1"
}
