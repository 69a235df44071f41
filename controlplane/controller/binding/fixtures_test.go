package binding

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// work builds a Work of binding uid for cluster with one manifest (as the
// shared layer's tests do; a test helper cannot cross packages).
func work(cluster, manifest string, mutate ...func(*workv1.Work)) *workv1.Work {
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

func stored(w *workv1.Work) *workv1.Work {
	w.ResourceVersion, w.UID = "7", "work-uid"
	return w
}

func deleting(w *workv1.Work) {
	now := metav1.Now()
	w.DeletionTimestamp = &now
}
