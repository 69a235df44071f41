package shared

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// TestValidateCrossClusterWork is the shape a MultiClusterService's Work
// must have before anything else is read: whoever writes one can at most
// ask for a flotilla-managed EndpointSlice of the Service of the
// MultiClusterService's name, in its namespace; never a slice of another
// Service or namespace, nor any other kind.
func TestValidateCrossClusterWork(t *testing.T) {
	m := &networkingv1.MultiClusterService{}
	m.Namespace, m.Name, m.UID = "shop", "web", "uid-1"
	ours := map[string]string{"kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": multicluster.ManagedBy}
	work := func(obj *unstructured.Unstructured, mutate ...func(*workv1.Work)) *workv1.Work {
		w, err := NewCrossClusterWork(m, "east", obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range mutate {
			f(w)
		}
		return w
	}
	slice := func(ns string, labels map[string]string) *unstructured.Unstructured {
		return mcsObject("discovery.k8s.io/v1", "EndpointSlice", ns, "web-mcs-abc", labels)
	}
	for _, tc := range []struct {
		name string
		work *workv1.Work
		err  string
	}{
		{name: "its slice", work: work(slice("shop", ours))},
		{name: "another namespace", work: work(slice("kube-system", ours)), err: `must be the MultiClusterService's namespace "shop"`},
		{name: "a slice of another Service", work: work(slice("shop", map[string]string{"kubernetes.io/service-name": "api", "endpointslice.kubernetes.io/managed-by": multicluster.ManagedBy})),
			err: `must be an EndpointSlice of Service "web"`},
		{name: "a slice flotilla does not manage", work: work(slice("shop", map[string]string{"kubernetes.io/service-name": "web"})), err: `must be an EndpointSlice of Service "web"`},
		{name: "a Service", work: work(mcsObject("v1", "Service", "shop", "web", nil)), err: `must be an EndpointSlice of Service "web"`},
		{name: "outside an execution namespace", work: work(slice("shop", ours), func(w *workv1.Work) { w.Namespace = "shop" }), err: "a Work lives in the execution namespace"},
		{name: "renamed", work: work(slice("shop", ours), func(w *workv1.Work) { w.Name = "mcs-cc-x" }), err: "is named"},
		{name: "also an import's", work: work(slice("shop", ours), func(w *workv1.Work) { w.Labels[LabelMCSImportName] = "web" }), err: "either a MultiClusterService's slices"},
		{name: "no UID", work: work(slice("shop", ours), func(w *workv1.Work) { delete(w.Labels, LabelCrossClusterUID) }), err: "names it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !CrossClusterWork(tc.work) {
				t.Fatal("not recognised as a MultiClusterService's Work")
			}
			errs := ValidateWork(tc.work)
			switch {
			case tc.err == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.err != "" && !strings.Contains(errs.ToAggregate().Error(), tc.err):
				t.Errorf("errors %v, want one containing %q", errs, tc.err)
			}
		})
	}
}
