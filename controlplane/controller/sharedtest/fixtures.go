package sharedtest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// DeploymentTemplate is a Deployment template of 3 replicas at generation 4.
func DeploymentTemplate() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "default", "name": "web", "generation": int64(4)},
		"spec":     map[string]any{"replicas": int64(3)},
	}}
}

// ClusterBinding builds a ClusterResourceBinding (Binding without a namespace).
func ClusterBinding(name, apiVersion, kind, resName string, mutate ...func(*workv1.ResourceBinding)) *workv1.ResourceBinding {
	return Binding("", name, apiVersion, kind, "", resName, mutate...)
}

// Tainted is a Cluster named name with taints.
func Tainted(name string, taints ...corev1.Taint) *api.Cluster {
	c := &api.Cluster{}
	c.Name, c.Spec.Taints = name, taints
	return c
}

// Binding builds a ResourceBinding for the validation table.
func Binding(ns, name, apiVersion, kind, resNS, resName string, mutate ...func(*workv1.ResourceBinding)) *workv1.ResourceBinding {
	rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	rb.Spec.Resource = api.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: resNS, Name: resName}
	rb.Spec.Placement = &api.Placement{}
	for _, m := range mutate {
		m(rb)
	}
	return rb
}
