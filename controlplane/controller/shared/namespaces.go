package shared

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Labels of the Works the namespace sync writes, one per host namespace and
// member cluster. The name label finds a namespace's Works after the
// namespace is gone; the permanent-id label (the namespace's UID) tells a
// namespace from a later one of the same name.
const (
	// LabelNamespaceSyncName holds the name of the host namespace a Work
	// carries to its member.
	LabelNamespaceSyncName = "namespace.flotilla.io/name"
	// LabelNamespaceSyncID holds the UID of that host namespace.
	LabelNamespaceSyncID = "namespace.flotilla.io/permanent-id"
	// LabelSkipAutoPropagation on a host namespace, with the value "true"
	// (any case), keeps the namespace sync from creating it in members:
	// Karmada's namespace.karmada.io/skip-auto-propagation, read as is so
	// Karmada users' namespaces behave the same.
	LabelSkipAutoPropagation = "namespace.karmada.io/skip-auto-propagation"
)

// karmadaReservedNamespaces are the namespaces Karmada's namespace sync
// never propagates (names.IsReservedNamespace plus default); a prefix ends
// in "*". Flotilla skips them too, so a host shared with Karmada, or YAML
// brought from one, never pushes Karmada's system namespaces to members.
var karmadaReservedNamespaces = []string{"default", "karmada-system", "karmada-cluster", "karmada-es-*"}

// SyncsNamespace reports whether the namespace sync creates ns in the
// members, and if not, why: Karmada's rules (default and its reserved
// namespaces, the skip-auto-propagation label) and flotilla's reserved
// namespaces (Options.ReservedNamespaces, kube-* and flotilla-system by
// default, and the execution namespaces), the equivalent of Karmada's
// --skipped-propagating-namespaces.
func SyncsNamespace(ns *corev1.Namespace, opts Options) (bool, string) {
	if why := skippedNamespaceName(ns.Name, opts); why != "" {
		return false, why
	}
	if strings.EqualFold(ns.Labels[LabelSkipAutoPropagation], "true") {
		return false, "labelled " + LabelSkipAutoPropagation + "=true"
	}
	return true, ""
}

// skippedNamespaceName says why a namespace of this name is never synced,
// or "". A namespace Work naming one is refused by the execution
// controller whoever wrote it.
func skippedNamespaceName(name string, opts Options) string {
	if opts.Reserved(name) {
		return "reserved by the control plane's reserved namespaces"
	}
	for _, r := range karmadaReservedNamespaces {
		if prefix, ok := strings.CutSuffix(r, "*"); (ok && strings.HasPrefix(name, prefix)) || name == r {
			return "a system namespace every cluster has, or one Karmada reserves"
		}
	}
	return ""
}

// NewNamespaceWork builds the Work that carries a rendered namespace to its
// cluster. Its conflict resolution is always Abort: a namespace that
// existed in the member before is never taken over (its labels stay as
// they are) and never deleted.
func NewNamespaceWork(ns *corev1.Namespace, rendered render.Work) (*workv1.Work, error) {
	raw, err := render.CanonicalJSON(rendered.Object)
	if err != nil {
		return nil, fmt.Errorf("encode the namespace rendered for cluster %s: %w", rendered.Cluster, err)
	}
	return &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   ExecutionNamespace(rendered.Cluster),
			Name:        WorkName(api.TemplateRefOf(rendered.Object)),
			Labels:      map[string]string{LabelNamespaceSyncName: ns.Name, LabelNamespaceSyncID: string(ns.UID)},
			Annotations: map[string]string{AnnotationConflictResolution: string(api.ConflictAbort)},
			Finalizers:  []string{FinalizerExecution},
		},
		Spec: api.WorkSpec{Workload: api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}, nil
}

// NamespaceTemplate is the host namespace as the template rendered for
// members: its metadata (labels and annotations) and spec; render strips
// what the host's apiserver set. The namespace sync renders it, and
// the execution controller checks a namespace Work against it.
func NamespaceTemplate(ns *corev1.Namespace) (*unstructured.Unstructured, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
	if err != nil {
		return nil, fmt.Errorf("convert namespace %s: %w", ns.Name, err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	return u, nil
}
