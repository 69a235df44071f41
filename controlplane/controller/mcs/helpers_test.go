package mcs_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// waitConditions waits for the ServiceExport shop/web's conditions to be
// want, each as "status reason message" by type.
func waitConditions(t *testing.T, hub client.Client, want map[string]string) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("ServiceExport conditions %v", want), func() (bool, string) {
		u := mcsObject("shop", multicluster.KindServiceExport, nil)
		if err := hub.Get(t.Context(), client.ObjectKeyFromObject(u), u); err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		got := map[string]string{}
		for _, c := range conds {
			m, _ := c.(map[string]any)
			got[fmt.Sprint(m["type"])] = fmt.Sprintf("%v %v %v", m["status"], m["reason"], m["message"])
		}
		return maps.Equal(got, want), fmt.Sprint(got)
	})
}

// waitGauge waits for a gauge of the control plane running in this
// process to read want.
func waitGauge(t *testing.T, what string, g prometheus.Gauge, want float64) {
	t.Helper()
	testkit.Eventually(t, deadline, what, func() (bool, string) {
		got := testutil.ToFloat64(g)
		return got == want, fmt.Sprint(got)
	})
}

// addressTypeChange replaces cluster's slice shop/web-a (IPv4 10.0.0.1)
// by an IPv6 slice of the same name (fd00::1) while no control plane runs,
// and starts one again with configure: its first collection sees the new
// slice where the host holds the old one's copy, as a collection that
// misses the deletion would.
func addressTypeChange(t *testing.T, f controllertest.Fleet, stop func(), cluster string, configure func(*shared.Options)) {
	t.Helper()
	stop()
	m := f.Members[cluster]
	if err := m.Delete(t.Context(), slice("shop", "web-a", "web")); err != nil {
		t.Fatal(err)
	}
	v6 := slice("shop", "web-a", "web", "fd00::1")
	v6.AddressType = discoveryv1.AddressTypeIPv6
	testkit.MustCreate(t, m, v6)
	f.StartControlPlane(t, configure)
}

// waitAddressTypes waits for the consumer's imported slices of ns to carry
// each address with the given address type.
func waitAddressTypes(t *testing.T, c client.Client, ns string, want map[string]discoveryv1.AddressType) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("address types %v in %s", want, ns), func() (bool, string) {
		var list discoveryv1.EndpointSliceList
		if err := c.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelManagedBy: multicluster.ManagedBy}); err != nil {
			return false, err.Error()
		}
		got := map[string]discoveryv1.AddressType{}
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				for _, a := range e.Addresses {
					if _, ok := want[a]; ok {
						got[a] = s.AddressType
					}
				}
			}
		}
		return maps.Equal(got, want), fmt.Sprint(got)
	})
}

func toUnstructured(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: m}
}

func installCRDs(t *testing.T, c client.Client) {
	t.Helper()
	for _, doc := range multicluster.CRDs() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		testkit.MustYAML(t, crd, "%s", doc)
		testkit.MustCreate(t, c, crd)
	}
	testkit.Eventually(t, deadline, "MCS CRDs established", func() (bool, string) {
		err := c.List(t.Context(), mcsList())
		return err == nil, fmt.Sprint(err)
	})
}

func mcsList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(multicluster.Group + "/" + multicluster.Version)
	l.SetKind("ServiceImportList")
	return l
}

func importSpec() map[string]any {
	return map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(80)}}}
}

func mcsObject(ns, kind string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	u.SetAPIVersion(multicluster.Group + "/" + multicluster.Version)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName("web")
	return u
}

// createMCS creates the ServiceExport or ServiceImport web once the host
// serves its kind.
func createMCS(t *testing.T, hub client.Client, ns, kind string, spec map[string]any) {
	t.Helper()
	testkit.Eventually(t, deadline, kind+" created", func() (bool, string) {
		err := hub.Create(t.Context(), mcsObject(ns, kind, spec))
		return err == nil, fmt.Sprint(err)
	})
}

func createPolicy(t *testing.T, hub client.Client, ns, name, kind string, clusters ...string) {
	t.Helper()
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	testkit.MustYAML(t, pp, "spec:\n  resourceSelectors:\n  - {apiVersion: %s/%s, kind: %s, name: web}\n  placement:\n    clusterAffinity: {clusterNames: [%s]}\n",
		multicluster.Group, multicluster.Version, kind, strings.Join(clusters, ", "))
	testkit.MustCreate(t, hub, pp)
}

func service(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

func endpoint(ip string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		NodeName: ptr.To("node-1")}
}

func slice(ns, name, service string, ips ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, endpoint(ip))
	}
	return s
}

// addresses are the endpoint addresses of the flotilla-managed slices of
// ns/derived-web in a member, sorted.
func addresses(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	if err := c.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{
		discoveryv1.LabelServiceName: "derived-web", discoveryv1.LabelManagedBy: multicluster.ManagedBy,
	}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			out = append(out, e.Addresses...)
		}
	}
	slices.Sort(out)
	return out
}

func waitAddresses(t *testing.T, c client.Client, ns string, want ...string) {
	t.Helper()
	waitAddressesEvery(t, c, ns, testkit.DefaultEvery, want...)
}

// waitAddressesEvery is waitAddresses looking every period, for timings.
func waitAddressesEvery(t *testing.T, c client.Client, ns string, every time.Duration, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	testkit.EventuallyEvery(t, every, deadline, fmt.Sprintf("consumer's %s/derived-web endpoints %v", ns, want), func() (bool, string) {
		got := addresses(t, c, ns)
		return slices.Equal(got, want), fmt.Sprint(got)
	})
}

func sliceNames(s []discoveryv1.EndpointSlice) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].Namespace + "/" + s[i].Name
	}
	return out
}

// dumpOnFailure logs the host's MCS bindings, import Works and collected
// slices when the test failed, to show where the chain stopped.
func dumpOnFailure(t *testing.T, hub client.Client) {
	if !t.Failed() {
		return
	}
	ctx := context.Background()
	var rbs workv1.ResourceBindingList
	_ = hub.List(ctx, &rbs)
	for _, rb := range rbs.Items {
		t.Logf("binding %s/%s clusters %v conditions %v", rb.Namespace, rb.Name, rb.Spec.Clusters, rb.Status.Conditions)
	}
	var works workv1.WorkList
	_ = hub.List(ctx, &works)
	for _, w := range works.Items {
		t.Logf("work %s/%s labels %v conditions %v", w.Namespace, w.Name, w.Labels, w.Status.Conditions)
	}
	var sl discoveryv1.EndpointSliceList
	_ = hub.List(ctx, &sl)
	for _, s := range sl.Items {
		t.Logf("host slice %s/%s labels %v", s.Namespace, s.Name, s.Labels)
	}
}

// settledVersions are the resourceVersions of the collected slices and
// the generations of the import Works of shop/web.
func settledVersions(t *testing.T, hub client.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	got, err := shared.CollectedSlices(t.Context(), hub, "shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		out["slice "+s.Namespace+"/"+s.Name] = s.ResourceVersion
	}
	var works workv1.WorkList
	if err := hub.List(t.Context(), &works, client.MatchingLabels{shared.LabelMCSImportNamespace: "shop", shared.LabelMCSImportName: "web"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range works.Items {
		out["work "+w.Namespace+"/"+w.Name] = fmt.Sprint(w.Generation)
	}
	return out
}

// waitImportClusters waits for the ServiceImport web of ns to list
// clusters (sorted) in status.clusters.
func waitImportClusters(t *testing.T, hub client.Client, ns string, clusters ...string) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("ServiceImport %s/web status.clusters %v", ns, clusters), func() (bool, string) {
		u := mcsObject(ns, multicluster.KindServiceImport, nil)
		if err := hub.Get(t.Context(), client.ObjectKeyFromObject(u), u); err != nil {
			return false, err.Error()
		}
		raw, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
		var got []string
		for _, c := range raw {
			m, _ := c.(map[string]any)
			got = append(got, fmt.Sprint(m["cluster"]))
		}
		return slices.Equal(got, clusters), fmt.Sprint(got)
	})
}
