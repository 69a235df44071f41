package api

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultTemplateNamespaces gives every namespaced template without a
// namespace the given one, as kubectl apply would. Offline there is no
// discovery, so a template counts as cluster-scoped when its kind is a
// built-in cluster-scoped kind, or a CustomResourceDefinition in the bundle
// declares it with scope Cluster; everything else is taken as namespaced.
// Call it once, after all files are merged, so CRDs from any file count.
// It fails, changing nothing, if defaulting would make two templates the
// same object.
func (b *Bundle) DefaultTemplateNamespaces(namespace string) error {
	clusterCRDs := clusterScopedCRDKinds(b.Templates)
	type rename struct {
		tmpl     *unstructured.Unstructured
		old, new string
	}
	var renames []rename
	var errs []error
	taken := map[string]bool{}
	for k := range b.Origins {
		taken[k] = true
	}
	for _, t := range b.Templates {
		if t.GetNamespace() != "" {
			continue
		}
		gk := t.GroupVersionKind().GroupKind()
		if IsClusterScopedBuiltin(gk) || clusterCRDs[gk] {
			continue
		}
		old := ObjectKey(t.GetAPIVersion(), t.GetKind(), "", t.GetName())
		key := ObjectKey(t.GetAPIVersion(), t.GetKind(), namespace, t.GetName())
		if taken[key] {
			errs = append(errs, fmt.Errorf("%s: %s in namespace %q is already defined at %s", b.Origins[old], old, namespace, b.Origins[key]))
			continue
		}
		taken[key] = true
		renames = append(renames, rename{tmpl: t, old: old, new: key})
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, r := range renames {
		r.tmpl.SetNamespace(namespace)
		if at, ok := b.Origins[r.old]; ok {
			delete(b.Origins, r.old)
			b.Origins[r.new] = at
		}
	}
	return nil
}

// clusterScopedCRDKinds reads the group and kind of every cluster-scoped
// CustomResourceDefinition among the templates.
func clusterScopedCRDKinds(templates []*unstructured.Unstructured) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, t := range templates {
		if t.GetKind() != "CustomResourceDefinition" || t.GroupVersionKind().Group != "apiextensions.k8s.io" {
			continue
		}
		scope, _, _ := unstructured.NestedString(t.Object, "spec", "scope")
		group, _, _ := unstructured.NestedString(t.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(t.Object, "spec", "names", "kind")
		if scope == "Cluster" && kind != "" {
			out[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	return out
}

// IsClusterScopedBuiltin reports whether gk is a cluster-scoped kind served
// by a stock kube-apiserver.
func IsClusterScopedBuiltin(gk schema.GroupKind) bool {
	switch gk.Group {
	case "":
		switch gk.Kind {
		case "Namespace", "Node", "PersistentVolume", "ComponentStatus":
			return true
		}
	case "rbac.authorization.k8s.io":
		return gk.Kind == "ClusterRole" || gk.Kind == "ClusterRoleBinding"
	case "storage.k8s.io":
		switch gk.Kind {
		case "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass":
			return true
		}
	case "apiextensions.k8s.io":
		return gk.Kind == "CustomResourceDefinition"
	case "apiregistration.k8s.io":
		return gk.Kind == "APIService"
	case "scheduling.k8s.io":
		return gk.Kind == "PriorityClass"
	case "networking.k8s.io":
		switch gk.Kind {
		case "IngressClass", "IPAddress", "ServiceCIDR":
			return true
		}
	case "node.k8s.io":
		return gk.Kind == "RuntimeClass"
	case "admissionregistration.k8s.io":
		switch gk.Kind {
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
			"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
			return true
		}
	case "certificates.k8s.io":
		return gk.Kind == "CertificateSigningRequest" || gk.Kind == "ClusterTrustBundle"
	case "flowcontrol.apiserver.k8s.io":
		return gk.Kind == "FlowSchema" || gk.Kind == "PriorityLevelConfiguration"
	case "resource.k8s.io":
		return gk.Kind == "DeviceClass" || gk.Kind == "ResourceSlice"
	}
	return false
}
