package multicluster

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The MCS API's group and kinds.
const (
	// Group is the MCS API's group.
	Group = "multicluster.x-k8s.io"
	// Version is the MCS API version flotilla serves and reads.
	Version = "v1alpha1"
	// KindServiceExport exports the Service of its name and namespace.
	KindServiceExport = "ServiceExport"
	// KindServiceImport gives a consumer the endpoints of the Service of its
	// name and namespace, exported elsewhere.
	KindServiceImport = "ServiceImport"
)

// Names and labels of what flotilla writes.
const (
	// DerivedPrefix starts the name of the Service a ServiceImport gives each
	// consumer, Karmada's "derived-<name>".
	DerivedPrefix = "derived-"
	// ManagedBy is the endpointslice.kubernetes.io/managed-by value of every
	// EndpointSlice flotilla writes, on the host and in consumers: the
	// members' EndpointSlice controllers leave such slices alone, and a
	// slice that carries it is never collected (a consumer that also
	// exports would otherwise send its imports back).
	ManagedBy = "mcs.flotilla.io"
	// LabelSourceCluster names the cluster a collected or imported slice's
	// endpoints come from (the MCS API's label). flotilla sets it from the
	// member the slice was read from, never from the slice.
	LabelSourceCluster = "multicluster.kubernetes.io/source-cluster"
	// LabelServiceName names the exported Service of a collected slice and
	// the ServiceImport of an imported slice or derived Service (the MCS
	// API's label).
	LabelServiceName = "multicluster.kubernetes.io/service-name"
	// LabelServiceNamespace names the exported Service's namespace on a
	// collected slice, which lives in its cluster's execution namespace.
	LabelServiceNamespace = "mcs.flotilla.io/service-namespace"
)

// maxName is the longest object name the apiserver accepts.
const maxName = 253

// ServiceExportGK and ServiceImportGK are the group kinds of the MCS API.
var (
	ServiceExportGK = schema.GroupKind{Group: Group, Kind: KindServiceExport}
	ServiceImportGK = schema.GroupKind{Group: Group, Kind: KindServiceImport}
)

// IsMCSKind reports whether gk is ServiceExport or ServiceImport.
func IsMCSKind(gk schema.GroupKind) bool {
	return gk == ServiceExportGK || gk == ServiceImportGK
}

// DerivedServiceName is the name of the Service a ServiceImport named name
// gives each consumer. A name that does not make a valid Service name
// (a DNS-1035 label of at most 63 characters) is an error naming the
// ServiceImport: the import is refused rather than shortened, since a
// shortened name could be another import's.
func DerivedServiceName(namespace, name string) (string, error) {
	derived := DerivedPrefix + name
	if errs := validation.IsDNS1035Label(derived); len(errs) > 0 {
		return "", fmt.Errorf("ServiceImport %s/%s: derived Service name %q is not a valid Service name: %s", namespace, name, derived, strings.Join(errs, "; "))
	}
	return derived, nil
}

// CollectedSliceName is the name, in its cluster's execution namespace on
// the host, of the copy of slice from namespace, of address type at: both
// names, then a hash of the three, so slices of different namespaces never
// share a name and a long pair still fits. The address type is in the
// hash because it is immutable: a member slice replaced under the same
// name by one of another type gets a new copy (and the consumers a new
// imported slice) instead of an update the apiservers refuse.
func CollectedSliceName(namespace, slice string, at discoveryv1.AddressType) string {
	return hashedName(namespace+"."+slice, namespace+"/"+slice+"/"+string(at))
}

// ImportedSliceName is the name, in a consumer, of the slice that carries
// the endpoints of one collected slice of cluster to the derived Service
// derived.
func ImportedSliceName(derived, cluster, collected string) string {
	return hashedName(derived, cluster+"/"+collected)
}

// hashedName is prefix, shortened as needed, and the fnv32a hash of key.
func hashedName(prefix, key string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	suffix := "-" + rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
	if len(prefix)+len(suffix) > maxName {
		prefix = strings.TrimRight(prefix[:maxName-len(suffix)], ".-")
	}
	return prefix + suffix
}

// Ours reports whether flotilla wrote the slice (its managed-by label).
func Ours(s *discoveryv1.EndpointSlice) bool {
	return s.Labels[discoveryv1.LabelManagedBy] == ManagedBy
}

// MultiClusterServiceGK is Karmada's MultiClusterService
// (networking.karmada.io); flotilla's own is FlotillaMultiClusterServiceGK.
var MultiClusterServiceGK = schema.GroupKind{Group: "networking.karmada.io", Kind: "MultiClusterService"}

// ErrContinuousOnly is why the synchronous driver (Terraform, preview)
// refuses the multi-cluster services kinds.
var ErrContinuousOnly = errors.New("multi-cluster services follow the members' endpoints between runs, which only the continuous control plane does; a plan cannot show them and an apply would not keep them current")

// ContinuousOnly reports whether gk is a multi-cluster services kind, which
// only continuous mode acts on.
func ContinuousOnly(gk schema.GroupKind) bool {
	return IsMCSKind(gk) || gk == MultiClusterServiceGK || gk == FlotillaMultiClusterServiceGK
}
