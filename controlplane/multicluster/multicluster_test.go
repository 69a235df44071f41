package multicluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestDerivedServiceName(t *testing.T) {
	for _, tc := range []struct {
		name, want, err string
	}{
		{name: "web", want: "derived-web"},
		{name: strings.Repeat("a", 55), want: "derived-" + strings.Repeat("a", 55)},
		{name: strings.Repeat("a", 56), err: "must be no more than 63 characters"},
		{name: "web.v1", err: "a DNS-1035 label"},
	} {
		got, err := DerivedServiceName("shop", tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "ServiceImport shop/"+tc.name) {
				t.Errorf("%s: error %v, want one naming the import and %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestNamesAreDistinctAndBounded(t *testing.T) {
	long := strings.Repeat("s", 253)
	v4 := discoveryv1.AddressTypeIPv4
	for _, tc := range []struct{ a, b string }{
		{CollectedSliceName("a-b", "c", v4), CollectedSliceName("a", "b-c", v4)},
		{CollectedSliceName("shop", "web-1", v4), CollectedSliceName("tenant", "web-1", v4)},
		// An address type is immutable: a slice replaced by one of another
		// type under the same name is another copy.
		{CollectedSliceName("shop", "web-1", v4), CollectedSliceName("shop", "web-1", discoveryv1.AddressTypeIPv6)},
		{ImportedSliceName("derived-web", "east", "x"), ImportedSliceName("derived-web", "west", "x")},
		{CollectedSliceName("ns", long, v4), CollectedSliceName("ns", long+"x", v4)},
	} {
		if tc.a == tc.b {
			t.Errorf("two sources share the name %q", tc.a)
		}
		for _, n := range []string{tc.a, tc.b} {
			if len(n) > maxName {
				t.Errorf("name of %d characters: %q", len(n), n)
			}
		}
	}
}

func memberSlice(ns, service string, mutate ...func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: service + "-abc", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.0.0.1"},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName:   ptr.To("node-1"),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-1"},
			Zone:       ptr.To("a"),
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// TestExportedSlice is the trust rule of collection: only the exported
// Service's own slices, of an IP address type, never flotilla's.
func TestExportedSlice(t *testing.T) {
	svc := types.NamespacedName{Namespace: "shop", Name: "web"}
	for _, tc := range []struct {
		name  string
		slice *discoveryv1.EndpointSlice
		why   string
	}{
		{"the Service's slice", memberSlice("shop", "web"), ""},
		{"another namespace", memberSlice("tenant", "web"), "not of the exported Service's namespace shop"},
		{"another Service", memberSlice("shop", "db"), `belongs to Service "db"`},
		{"no Service label", memberSlice("shop", "web", func(s *discoveryv1.EndpointSlice) { s.Labels = nil }), `belongs to Service ""`},
		{"imported by flotilla", memberSlice("shop", "web", func(s *discoveryv1.EndpointSlice) { s.Labels[discoveryv1.LabelManagedBy] = ManagedBy }), "never exported again"},
		{"FQDN", memberSlice("shop", "web", func(s *discoveryv1.EndpointSlice) { s.AddressType = discoveryv1.AddressTypeFQDN }), "only IPv4 and IPv6"},
	} {
		got := ExportedSlice(svc, tc.slice)
		if (tc.why == "") != (got == "") || !strings.Contains(got, tc.why) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.why)
		}
	}
}

// TestCollect: the copy names the cluster it was read from, whatever the
// slice's own labels claim, and drops what names the source's objects.
func TestCollect(t *testing.T) {
	s := memberSlice("shop", "web", func(s *discoveryv1.EndpointSlice) { s.Labels[LabelSourceCluster] = "forged" })
	got := Collect("east", "flotilla-es-east", s)
	want := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-es-east", Name: CollectedSliceName("shop", "web-abc", discoveryv1.AddressTypeIPv4), Labels: map[string]string{
			discoveryv1.LabelManagedBy: ManagedBy, LabelSourceCluster: "east", LabelServiceName: "web", LabelServiceNamespace: "shop",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, Zone: ptr.To("a")}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("collected (-want +got):\n%s", d)
	}
	if !SameCollected(got, Collect("east", "flotilla-es-east", s)) {
		t.Error("the same slice collected twice differs")
	}
	moved := memberSlice("shop", "web", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"10.0.0.2"} })
	if SameCollected(got, Collect("east", "flotilla-es-east", moved)) {
		t.Error("a moved endpoint counts as unchanged")
	}
}

func serviceImport(ns string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(Group + "/" + Version)
	u.SetKind(KindServiceImport)
	u.SetNamespace(ns)
	u.SetName("web")
	return u
}

func TestImport(t *testing.T) {
	ports := []any{map[string]any{"name": "http", "port": int64(80)}}
	east := *Collect("east", "flotilla-es-east", memberSlice("shop", "web"))
	west := *Collect("west", "flotilla-es-west", memberSlice("shop", "web"))
	for _, tc := range []struct {
		name      string
		spec      map[string]any
		collected []discoveryv1.EndpointSlice
		clusterIP string
		sources   []string
		err       string
	}{
		{name: "two providers", spec: map[string]any{"type": "ClusterSetIP", "ports": ports}, collected: []discoveryv1.EndpointSlice{west, east}, sources: []string{"east", "west"}},
		{name: "headless", spec: map[string]any{"type": "Headless", "ports": ports}, clusterIP: "None"},
		{name: "no ports", spec: map[string]any{"type": "ClusterSetIP"}, err: "spec.ports: at least one port"},
		{name: "bad port", spec: map[string]any{"ports": []any{map[string]any{"port": int64(70000)}}}, err: "spec.ports[0].port 70000"},
		{name: "bad type", spec: map[string]any{"type": "LoadBalancer", "ports": ports}, err: `spec.type "LoadBalancer"`},
		{name: "another namespace's slice", spec: map[string]any{"ports": ports}, collected: []discoveryv1.EndpointSlice{*Collect("east", "flotilla-es-east", memberSlice("tenant", "web"))}, err: "is of Service tenant/web"},
	} {
		objs, err := Import(serviceImport("shop", tc.spec), tc.collected)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		svc := objs[0]
		if svc.GetKind() != "Service" || svc.GetName() != "derived-web" || svc.GetNamespace() != "shop" {
			t.Errorf("%s: first object %s %s/%s", tc.name, svc.GetKind(), svc.GetNamespace(), svc.GetName())
		}
		if ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP"); ip != tc.clusterIP {
			t.Errorf("%s: clusterIP %q, want %q", tc.name, ip, tc.clusterIP)
		}
		if _, ok, _ := unstructured.NestedFieldNoCopy(svc.Object, "spec", "selector"); ok {
			t.Errorf("%s: the derived Service has a selector", tc.name)
		}
		var sources []string
		for _, o := range objs[1:] {
			l := o.GetLabels()
			if l[discoveryv1.LabelServiceName] != "derived-web" || l[discoveryv1.LabelManagedBy] != ManagedBy || o.GetNamespace() != "shop" {
				t.Errorf("%s: slice %s/%s labels %v", tc.name, o.GetNamespace(), o.GetName(), l)
			}
			if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "creationTimestamp"); ok {
				t.Errorf("%s: slice carries a creationTimestamp", tc.name)
			}
			sources = append(sources, l[LabelSourceCluster])
		}
		if len(sources) != len(tc.sources) {
			t.Errorf("%s: slices from %v, want %v", tc.name, sources, tc.sources)
		}
		for _, s := range tc.sources {
			if !strings.Contains(strings.Join(sources, ","), s) {
				t.Errorf("%s: no slice from %s in %v", tc.name, s, sources)
			}
		}
	}
}

func TestCRDs(t *testing.T) {
	docs := CRDs()
	if len(docs) != 2 || !strings.Contains(string(docs[0]), "serviceexports.multicluster.x-k8s.io") || !strings.Contains(string(docs[1]), "serviceimports.multicluster.x-k8s.io") {
		t.Errorf("CRDs: %d documents", len(docs))
	}
}
