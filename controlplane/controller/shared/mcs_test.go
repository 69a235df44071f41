package shared

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

func mcsObject(apiVersion, kind, ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

// TestValidateMCSWork is the shape a ServiceImport's Work must have before
// anything else is read: whoever writes one can at most ask for the
// import's derived Service or a flotilla-managed slice of it, in the
// import's namespace.
func TestValidateMCSWork(t *testing.T) {
	rb := &workv1.ResourceBinding{}
	rb.Namespace, rb.Name, rb.UID = "shop", ImportBinding("shop", "web").Name, "uid-1"
	rb.Spec.Resource.Name = "web"
	ours := map[string]string{"kubernetes.io/service-name": "derived-web", "endpointslice.kubernetes.io/managed-by": multicluster.ManagedBy}
	work := func(obj *unstructured.Unstructured, mutate ...func(*workv1.Work)) *workv1.Work {
		w, err := NewMCSWork(rb, "east", obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mutate {
			m(w)
		}
		return w
	}
	for _, tc := range []struct {
		name string
		work *workv1.Work
		err  string
	}{
		{name: "derived Service", work: work(mcsObject("v1", "Service", "shop", "derived-web", nil))},
		{name: "its slice", work: work(mcsObject("discovery.k8s.io/v1", "EndpointSlice", "shop", "derived-web-abc", ours))},
		{name: "another namespace", work: work(mcsObject("v1", "Service", "kube-system", "derived-web", nil)), err: `must be the ServiceImport's namespace "shop"`},
		{name: "another Service", work: work(mcsObject("v1", "Service", "shop", "web", nil)), err: `must be the Service "derived-web"`},
		{name: "a slice of another Service", work: work(mcsObject("discovery.k8s.io/v1", "EndpointSlice", "shop", "x",
			map[string]string{"kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": multicluster.ManagedBy})), err: "one of its EndpointSlices"},
		{name: "a slice flotilla does not manage", work: work(mcsObject("discovery.k8s.io/v1", "EndpointSlice", "shop", "x",
			map[string]string{"kubernetes.io/service-name": "derived-web"})), err: "one of its EndpointSlices"},
		{name: "another kind", work: work(mcsObject("v1", "Secret", "shop", "derived-web", nil)), err: `must be the Service "derived-web"`},
		{name: "outside an execution namespace", work: work(mcsObject("v1", "Service", "shop", "derived-web", nil), func(w *workv1.Work) { w.Namespace = "shop" }),
			err: "a Work lives in the execution namespace"},
		{name: "renamed", work: work(mcsObject("v1", "Service", "shop", "derived-web", nil), func(w *workv1.Work) { w.Name = "web-123" }), err: "is named"},
		{name: "also a binding's", work: work(mcsObject("v1", "Service", "shop", "derived-web", nil), func(w *workv1.Work) { w.Labels[LabelBindingPermanentID] = "x" }),
			err: "either a ServiceImport's objects"},
		{name: "no UID", work: work(mcsObject("v1", "Service", "shop", "derived-web", nil), func(w *workv1.Work) { delete(w.Labels, LabelMCSImportUID) }),
			err: LabelMCSImportUID},
	} {
		if !MCSWork(tc.work) {
			t.Errorf("%s: not seen as a ServiceImport's Work", tc.name)
		}
		errs := ValidateWork(tc.work)
		got := errs.ToAggregate()
		switch {
		case tc.err == "" && got != nil:
			t.Errorf("%s: refused: %v", tc.name, got)
		case tc.err != "" && (got == nil || !strings.Contains(got.Error(), tc.err)):
			t.Errorf("%s: %v, want an error with %q", tc.name, got, tc.err)
		}
	}
}
