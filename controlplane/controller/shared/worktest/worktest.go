// Package worktest builds the Works the tests of the controller packages
// use (the shared layer's own tests cannot: this package imports the
// shared layer). Production code must not import it.
package worktest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Work builds a Work of binding uid for cluster with one manifest.
func Work(cluster, manifest string, mutate ...func(*workv1.Work)) *workv1.Work {
	w := &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: shared.ExecutionNamespace(cluster), Name: "web-abc",
			Labels:      map[string]string{shared.LabelBindingPermanentID: "uid"},
			Annotations: map[string]string{shared.AnnotationBindingNamespace: "default", shared.AnnotationBindingName: "web-deployment.apps", shared.AnnotationTemplateGeneration: "1"},
			Finalizers:  []string{shared.FinalizerExecution},
		},
		Spec: api.WorkSpec{Workload: api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
	}
	for _, m := range mutate {
		m(w)
	}
	return w
}

// Stored gives w the resource version and UID of a stored object.
func Stored(w *workv1.Work) *workv1.Work {
	w.ResourceVersion, w.UID = "7", "work-uid"
	return w
}

// Deleting marks w as being deleted.
func Deleting(w *workv1.Work) {
	now := metav1.Now()
	w.DeletionTimestamp = &now
}
