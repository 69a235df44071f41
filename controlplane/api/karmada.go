package api

// Labels and annotations Karmada's controllers put on the objects they
// write, read (never written) by flotilla when it takes over a host where
// Karmada ran (`adopt-karmada`). The values are Karmada's own
// (pkg/apis/work/v1alpha2 and pkg/util of karmada-io/karmada).
const (
	// KarmadaLabelManaged marks a member object Karmada's execution
	// controller applied; its value is "true".
	KarmadaLabelManaged = "karmada.io/managed"
	// KarmadaLabelBindingPermanentID holds a ResourceBinding's permanent ID
	// on the binding, on its Works and on the member objects applied from
	// them.
	KarmadaLabelBindingPermanentID = "resourcebinding.karmada.io/permanent-id"
	// KarmadaLabelClusterBindingPermanentID is the same for a
	// ClusterResourceBinding (the binding of a cluster-scoped template):
	// Karmada puts this key, not KarmadaLabelBindingPermanentID, on the
	// binding, its Works and their member objects.
	KarmadaLabelClusterBindingPermanentID = "clusterresourcebinding.karmada.io/permanent-id"
	// KarmadaLabelWorkPermanentID holds a Work's permanent ID on the Work
	// and on the member object applied from it.
	KarmadaLabelWorkPermanentID = "work.karmada.io/permanent-id"
	// KarmadaAnnotationBindingName and KarmadaAnnotationBindingNamespace
	// name a Work's ResourceBinding, on the Work and its member objects.
	KarmadaAnnotationBindingName      = "resourcebinding.karmada.io/name"
	KarmadaAnnotationBindingNamespace = "resourcebinding.karmada.io/namespace"
	// KarmadaAnnotationClusterBindingName names a Work's
	// ClusterResourceBinding, on the Work and its member objects.
	KarmadaAnnotationClusterBindingName = "clusterresourcebinding.karmada.io/name"
	// KarmadaAnnotationWorkName and KarmadaAnnotationWorkNamespace name,
	// on a member object, the Work it was applied from.
	KarmadaAnnotationWorkName      = "work.karmada.io/name"
	KarmadaAnnotationWorkNamespace = "work.karmada.io/namespace"
	// KarmadaAnnotationConflictResolution is a Work's (and its member
	// object's) conflict resolution: "overwrite" or "abort".
	KarmadaAnnotationConflictResolution = "work.karmada.io/conflict-resolution"
	// KarmadaLabelPolicyPermanentID holds, on a template and the objects
	// rendered from it, the permanent ID of the PropagationPolicy that
	// claimed it.
	KarmadaLabelPolicyPermanentID = "propagationpolicy.karmada.io/permanent-id"
	// KarmadaLabelClusterPolicyPermanentID is the same for a
	// ClusterPropagationPolicy.
	KarmadaLabelClusterPolicyPermanentID = "clusterpropagationpolicy.karmada.io/permanent-id"
	// KarmadaValueManaged is KarmadaLabelManaged's value.
	KarmadaValueManaged = "true"
)
